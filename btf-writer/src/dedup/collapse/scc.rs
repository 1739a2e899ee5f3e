//! One table's reference graph and its strongly connected components.
//!
//! Types that reach each other (a struct, a pointer to it, a member of it
//! pointing back) can only be matched together, while everything else can
//! be matched bottom-up once its targets are: the components, in an order
//! where a component comes after every component it refers to, say which
//! is which.

use super::super::common::Error;
use crate::types::{Type, TypeId};

/// The references of a table's types (0-based indexes, `void` left out,
/// a reference repeating the one before it too), in compressed rows.
#[derive(Debug)]
pub(super) struct Graph {
    starts: Vec<u32>,
    edges: Vec<u32>,
}

impl Graph {
    /// The graph of `types`, whose ids are `1..=types.len()`; a type that
    /// refers past the table is an error naming both ids. `visit` is
    /// handed each type with an [`EdgeSink`] to pass the type's references
    /// to, in record order, for a caller with a pass of its own over the
    /// types that reads the references anyway (see
    /// [`super::shape::own_hash_and_refs`]).
    #[inline]
    pub(super) fn new(
        types: &[Type<'_>],
        mut visit: impl FnMut(&Type<'_>, &mut EdgeSink<'_>),
    ) -> Result<Graph, Error> {
        let mut starts = Vec::with_capacity(types.len() + 1);
        let mut edges: Vec<u32> = Vec::with_capacity(types.len() * 3);
        let mut dangling = None;
        for (index, t) in types.iter().enumerate() {
            starts.push(edges.len() as u32);
            let mut sink = EdgeSink {
                start: edges.len(),
                edges: &mut edges,
                nodes: types.len(),
                source: index,
                dangling: &mut dangling,
            };
            visit(t, &mut sink);
        }
        starts.push(edges.len() as u32);
        match dangling {
            Some(err) => Err(err),
            None => Ok(Graph { starts, edges }),
        }
    }

    /// Number of nodes.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Where the edges of `node` are in `edges` (empty past the graph).
    fn edge_range(&self, node: u32) -> (u32, u32) {
        let node = node as usize;
        match (self.starts.get(node), self.starts.get(node + 1)) {
            (Some(&start), Some(&end)) => (start, end),
            _ => (0, 0),
        }
    }

    /// The nodes `node` refers to.
    #[inline]
    pub(super) fn children(&self, node: u32) -> &[u32] {
        let node = node as usize;
        match (self.starts.get(node), self.starts.get(node + 1)) {
            (Some(&start), Some(&end)) => {
                self.edges.get(start as usize..end as usize).unwrap_or(&[])
            }
            _ => &[],
        }
    }
}

/// Where [`Graph::new`] files the references of the type being visited.
pub(super) struct EdgeSink<'g> {
    edges: &'g mut Vec<u32>,
    /// Where the type's edges start in `edges`.
    start: usize,
    nodes: usize,
    /// The type's index.
    source: usize,
    dangling: &'g mut Option<Error>,
}

impl EdgeSink<'_> {
    /// Adds a reference of the type (`void` is left out).
    #[inline]
    pub(super) fn add(&mut self, id: TypeId) {
        if id.0 == 0 {
            return;
        }
        let target = id.0 - 1;
        match usize::try_from(target) {
            // A reference repeating the one before (members of the same
            // type in a row) adds nothing to what reaches what.
            Ok(_) if self.edges.len() > self.start && self.edges.last() == Some(&target) => {}
            Ok(index) if index < self.nodes => self.edges.push(target),
            _ => {
                self.dangling.get_or_insert(Error::DanglingReference {
                    type_id: TypeId(self.source as u32 + 1),
                    referenced: id,
                });
            }
        }
    }
}

/// Visits `t`'s references into `sink`, for a [`Graph`] of nothing else.
#[cfg(test)]
#[inline]
pub(super) fn refs_only(t: &Type<'_>, sink: &mut EdgeSink<'_>) {
    t.for_each_ref(|id| sink.add(id));
}

/// The components of a [`Graph`].
#[derive(Debug)]
pub(super) struct Components {
    /// Nodes grouped by component, components in dependency order (each
    /// after the components it refers to).
    pub(super) nodes: Vec<u32>,
    /// Where each component starts in `nodes`, plus the end.
    pub(super) starts: Vec<u32>,
    /// Each node's component index.
    pub(super) of: Vec<u32>,
    /// Whether each component is a cycle (see [`Components::is_cycle`]),
    /// settled once here: the collapse asks for every component, twice
    /// for the new ones.
    cyclic: Vec<bool>,
}

impl Components {
    /// Number of components.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Whether component `c` is a cycle: several types that reach each
    /// other, or one that refers to itself.
    #[inline]
    pub(super) fn is_cycle(&self, c: usize) -> bool {
        self.cyclic.get(c).copied().unwrap_or(false)
    }

    /// The nodes of component `c`, in ascending order.
    #[inline]
    pub(super) fn members(&self, c: usize) -> &[u32] {
        match (self.starts.get(c), self.starts.get(c + 1)) {
            (Some(&start), Some(&end)) => {
                self.nodes.get(start as usize..end as usize).unwrap_or(&[])
            }
            _ => &[],
        }
    }
}

/// The number of a node whose component is closed (see [`components_except`]).
const FINISHED: u32 = u32::MAX;

/// A node being visited: where its scan of its edges is, and what the
/// scan found so far.
struct Frame {
    node: u32,
    /// Its next edge to scan, and the end of its edges.
    next: u32,
    end: u32,
    /// The lowest number met so far (its low-link).
    low: u32,
    /// Whether it is still the root of its component candidate.
    root: bool,
}

/// The components of `graph` in dependency order (see
/// [`components_except`]).
#[cfg(test)]
pub(super) fn components(graph: &Graph) -> Components {
    components_except(graph, &[])
}

/// A node in no component (see [`components_except`]).
pub(super) const NO_COMPONENT: u32 = u32::MAX;

/// The components of `graph`'s nodes but those in `settled`, in
/// dependency order. A settled node (a type already matched) must have no
/// edges of its own: it is finished from the start, in no component (its
/// [`Components::of`] is [`NO_COMPONENT`]), and edges to it are edges to
/// a finished node.
///
/// How: Tarjan's algorithm in Pearce's form (one number per node instead of an
/// index, a low-link and an on-stack flag), iteratively: reference chains
/// can be deep. It finishes a component only after every component
/// reachable from it, which is the dependency order wanted.
///
/// A node's number is 0 before it is visited, its visit rank while its
/// component is open, and `FINISHED` after. A node whose references are
/// all finished (none: INT, ENUM, FWD, ...; or all to types met earlier,
/// as most of them are) is finished as soon as it is reached, without a
/// rank or a frame: Tarjan's algorithm would make it a component of its
/// own at that very point. Any other node's scan starts at its first edge
/// to a node not finished: the edges before it can change nothing.
///
/// A node's low-link and root flag live in its frame while it is visited
/// (only its own scan and its children's completions change them); its
/// number is written back when it is left for a child, where other nodes
/// may read it, and when it completes. With the scan starting past the
/// finished edges, this took the pass from 798M to 716M instructions on
/// Debian's vmlinux.
#[inline]
pub(super) fn components_except(graph: &Graph, settled: &[u32]) -> Components {
    let n = graph.len();
    let mut rank = vec![0u32; n];
    let mut open: Vec<u32> = Vec::new();
    let mut calls: Vec<Frame> = Vec::new();
    let mut next_rank = 1u32;
    let mut out = Components {
        nodes: Vec::with_capacity(n),
        starts: Vec::with_capacity(n + 1),
        of: vec![0; n],
        cyclic: Vec::with_capacity(n),
    };
    out.starts.push(0);
    for &node in settled {
        if let (Some(r), Some(of)) = (rank.get_mut(node as usize), out.of.get_mut(node as usize)) {
            *r = FINISHED;
            *of = NO_COMPONENT;
        }
    }

    for start in 0..n as u32 {
        if rank[start as usize] != 0 {
            continue;
        }
        let Some((next, end)) = first_open_edge(graph, &rank, start) else {
            rank[start as usize] = FINISHED;
            out.finish_alone(start);
            continue;
        };
        rank[start as usize] = next_rank;
        calls.push(Frame {
            node: start,
            next,
            end,
            low: next_rank,
            root: true,
        });
        next_rank += 1;
        while let Some(top) = calls.last_mut() {
            let mut unvisited = None;
            while top.next < top.end {
                let Some(&child) = graph.edges.get(top.next as usize) else {
                    top.next = top.end;
                    break;
                };
                top.next += 1;
                let child_rank = rank[child as usize];
                if child_rank == 0 {
                    match first_open_edge(graph, &rank, child) {
                        None => {
                            rank[child as usize] = FINISHED;
                            out.finish_alone(child);
                            continue;
                        }
                        Some((next, end)) => {
                            unvisited = Some((child, next, end));
                            break;
                        }
                    }
                }
                if child_rank < top.low {
                    top.low = child_rank;
                    top.root = false;
                }
            }
            if let Some((child, next, end)) = unvisited {
                rank[top.node as usize] = top.low;
                rank[child as usize] = next_rank;
                calls.push(Frame {
                    node: child,
                    next,
                    end,
                    low: next_rank,
                    root: true,
                });
                next_rank += 1;
                continue;
            }
            let Some(Frame {
                node, low, root, ..
            }) = calls.pop()
            else {
                break;
            };
            let v = node as usize;
            rank[v] = low;
            if root {
                let component = out.len() as u32;
                let first = out.nodes.len();
                out.nodes.push(node);
                while let Some(&w) = open.last() {
                    if rank[w as usize] < low {
                        break;
                    }
                    open.pop();
                    out.nodes.push(w);
                }
                for &w in &out.nodes[first..] {
                    rank[w as usize] = FINISHED;
                    out.of[w as usize] = component;
                }
                let size = out.nodes.len() - first;
                out.cyclic
                    .push(size > 1 || graph.children(node).contains(&node));
                out.starts.push(out.nodes.len() as u32);
            } else {
                open.push(node);
                if let Some(parent) = calls.last_mut() {
                    if low < parent.low {
                        parent.low = low;
                        parent.root = false;
                    }
                }
            }
        }
    }
    out.order_members();
    out
}

/// Where `node`'s first edge to a node not finished is, with the end of
/// its edges; `None` when all its targets are finished (a node referring
/// to itself is not: it is still being visited).
fn first_open_edge(graph: &Graph, rank: &[u32], node: u32) -> Option<(u32, u32)> {
    let (first, end) = graph.edge_range(node);
    let targets = graph.edges.get(first as usize..end as usize).unwrap_or(&[]);
    let open = targets
        .iter()
        .position(|&target| rank.get(target as usize) != Some(&FINISHED))?;
    Some((first + open as u32, end))
}

impl Components {
    /// Puts each component's nodes in ascending order, as
    /// [`Components::members`] promises: one pass over the nodes places
    /// every component's. Sorting each cycle instead cost 124 M
    /// instructions on Debian 6.1's vmlinux (cachegrind, `-j1`): a CU's
    /// largest cycle holds most of its structs.
    fn order_members(&mut self) {
        // Only cycles can be out of order: a component of one node is in
        // order already.
        if self.nodes.len() == self.len() {
            return;
        }
        let mut cursor: Vec<u32> = self.starts.iter().take(self.len()).copied().collect();
        // Every node, settled ones (in no component) too.
        for node in 0..self.of.len() as u32 {
            let Some(&component) = self.of.get(node as usize) else {
                continue;
            };
            let Some(at) = cursor.get_mut(component as usize) else {
                continue;
            };
            if let Some(slot) = self.nodes.get_mut(*at as usize) {
                *slot = node;
            }
            *at += 1;
        }
    }

    /// Closes a component of one node whose references are all finished.
    fn finish_alone(&mut self, node: u32) {
        let component = self.len() as u32;
        self.nodes.push(node);
        if let Some(slot) = self.of.get_mut(node as usize) {
            *slot = component;
        }
        self.cyclic.push(false);
        self.starts.push(self.nodes.len() as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_types::test_name;
    use crate::types::{Composite, Member};

    fn node_struct(targets: &[u32]) -> Type<'static> {
        Type::Struct(Composite {
            name: "s",
            size: 8,
            members: targets
                .iter()
                .map(|&t| Member {
                    name: test_name("m"),
                    ty: TypeId(t),
                    bit_offset: 0,
                    bitfield_size: 0,
                })
                .collect(),
            kind_flag: false,
        })
    }

    #[test]
    fn cycles_form_one_component_after_what_they_reach() {
        // 1 -> 2 -> 3 -> 2, 3 -> 4; 5 alone; 6 -> 6.
        let types = vec![
            node_struct(&[2]),
            Type::Ptr(TypeId(3)),
            node_struct(&[2, 4]),
            node_struct(&[]),
            node_struct(&[0]),
            Type::Ptr(TypeId(6)),
        ];
        let graph = Graph::new(&types, refs_only).unwrap();
        let comps = components(&graph);
        let sets: Vec<Vec<u32>> = (0..comps.len())
            .map(|c| comps.members(c).to_vec())
            .collect();
        let position = |node: u32| sets.iter().position(|s| s.contains(&node)).unwrap();
        assert_eq!(
            sets[position(1)],
            vec![1, 2],
            "2 and 3 (0-based 1, 2) reach each other"
        );
        assert!(
            position(3) < position(1),
            "4 is finished before the cycle that reaches it"
        );
        assert!(
            position(1) < position(0),
            "1 after the cycle it points into"
        );
        assert_eq!(sets.iter().map(Vec::len).sum::<usize>(), 6);
        assert_eq!(comps.of[5], position(5) as u32);
        assert!(comps.is_cycle(position(1)), "2 <-> 3");
        assert!(comps.is_cycle(position(5)), "6 refers to itself");
        assert!(
            !comps.is_cycle(position(0)) && !comps.is_cycle(position(4)),
            "no way back to 1 or 5"
        );
    }

    /// Textbook recursive Tarjan: components in the order their roots
    /// complete, members ascending.
    fn reference_components(graph: &Graph) -> (Vec<Vec<u32>>, Vec<bool>) {
        struct State<'g> {
            graph: &'g Graph,
            index: Vec<Option<u32>>,
            low: Vec<u32>,
            on_stack: Vec<bool>,
            stack: Vec<u32>,
            next: u32,
            out: Vec<Vec<u32>>,
            cyclic: Vec<bool>,
        }
        fn visit(s: &mut State<'_>, v: u32) {
            s.index[v as usize] = Some(s.next);
            s.low[v as usize] = s.next;
            s.next += 1;
            s.stack.push(v);
            s.on_stack[v as usize] = true;
            for &w in s.graph.children(v) {
                match s.index[w as usize] {
                    None => {
                        visit(s, w);
                        s.low[v as usize] = s.low[v as usize].min(s.low[w as usize]);
                    }
                    Some(index) if s.on_stack[w as usize] => {
                        s.low[v as usize] = s.low[v as usize].min(index)
                    }
                    Some(_) => {}
                }
            }
            if Some(s.low[v as usize]) == s.index[v as usize] {
                let mut members = Vec::new();
                while let Some(w) = s.stack.pop() {
                    s.on_stack[w as usize] = false;
                    members.push(w);
                    if w == v {
                        break;
                    }
                }
                members.sort_unstable();
                s.cyclic
                    .push(members.len() > 1 || s.graph.children(v).contains(&v));
                s.out.push(members);
            }
        }
        let n = graph.len();
        let mut s = State {
            graph,
            index: vec![None; n],
            low: vec![0; n],
            on_stack: vec![false; n],
            stack: Vec::new(),
            next: 0,
            out: Vec::new(),
            cyclic: Vec::new(),
        };
        for v in 0..n as u32 {
            if s.index[v as usize].is_none() {
                visit(&mut s, v);
            }
        }
        (s.out, s.cyclic)
    }

    /// A reproducible source of numbers below a bound (xorshift64), for
    /// the random graphs.
    fn xorshift(mut seed: u64) -> impl FnMut(u32) -> u32 {
        move |below| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % u64::from(below)) as u32
        }
    }

    /// On random graphs (sparse and dense, with self-references and
    /// repeated edges), the components, their order, their members and
    /// their cycle flags are the textbook algorithm's.
    #[test]
    fn components_are_tarjans_in_the_same_order() {
        let mut random = xorshift(0x2545_f491_4f6c_dd1d);
        for round in 0..300 {
            let n = 1 + random(40);
            let fanout = 1 + round % 4;
            let types: Vec<Type<'static>> = (0..n)
                .map(|_| {
                    let targets: Vec<u32> =
                        (0..random(fanout + 1)).map(|_| random(n + 1)).collect();
                    node_struct(&targets)
                })
                .collect();
            let graph = Graph::new(&types, refs_only).unwrap();
            let comps = components(&graph);
            let (expected, cyclic) = reference_components(&graph);
            let got: Vec<Vec<u32>> = (0..comps.len())
                .map(|c| comps.members(c).to_vec())
                .collect();
            assert_eq!(got, expected, "round {round}");
            assert_eq!(
                (0..comps.len())
                    .map(|c| comps.is_cycle(c))
                    .collect::<Vec<_>>(),
                cyclic,
                "round {round}"
            );
            for (c, members) in got.iter().enumerate() {
                assert!(
                    members.iter().all(|&m| comps.of[m as usize] == c as u32),
                    "round {round}"
                );
            }
        }
    }

    /// Settled nodes (without edges of their own) are in no component;
    /// the other components, their order and their members are those of
    /// the whole graph, where each settled node is a component alone.
    #[test]
    fn settled_nodes_are_left_out_and_the_rest_kept_in_order() {
        let mut random = xorshift(0x9e37_79b9_7f4a_7c15);
        for round in 0..300 {
            let n = 1 + random(40);
            let settled: Vec<u32> = (0..n).filter(|_| random(3) == 0).collect();
            let types: Vec<Type<'static>> = (0..n)
                .map(|i| {
                    if settled.contains(&i) {
                        return node_struct(&[]);
                    }
                    let targets: Vec<u32> = (0..random(4)).map(|_| random(n + 1)).collect();
                    node_struct(&targets)
                })
                .collect();
            let graph = Graph::new(&types, refs_only).unwrap();
            let whole = components(&graph);
            let expected: Vec<Vec<u32>> = (0..whole.len())
                .map(|c| whole.members(c).to_vec())
                .filter(|m| !(m.len() == 1 && settled.contains(&m[0])))
                .collect();
            let comps = components_except(&graph, &settled);
            let got: Vec<Vec<u32>> = (0..comps.len())
                .map(|c| comps.members(c).to_vec())
                .collect();
            assert_eq!(got, expected, "round {round}");
            for &node in &settled {
                assert_eq!(comps.of[node as usize], NO_COMPONENT, "round {round}");
            }
        }
    }

    #[test]
    fn references_past_the_table_are_refused() {
        assert_eq!(
            Graph::new(&[Type::Ptr(TypeId(2))], refs_only).err(),
            Some(Error::DanglingReference {
                type_id: TypeId(1),
                referenced: TypeId(2)
            })
        );
    }
}
