//! No module of a library crate depends on itself through others.
//!
//! An edge `a -> b` is a path in `a`'s code outside its tests that names
//! module `b` or an item defined in `b`: a `use` (also `pub use`) or an
//! inline `crate::`, `super::` or `self::` path. An item reached through a
//! re-export (`pub use self::elf::*` in `lib.rs`) counts as the module
//! that defines it, so `crate::Error` is an edge to `error`, not to the
//! crate root. `mod` declarations are not edges, nor are inherent `impl`
//! blocks split over several files (a method call names no module). The
//! test fails listing each cycle with the lines that make its edges.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The library crates' sources, from the workspace root, with the cycles
/// each still has (sorted members, as reported): a new cycle fails, and
/// so does a listed one that is gone, so that the list only shrinks.
const CRATES: [(&str, &[&[&str]]); 2] = [("dwarf/src", &[]), ("btf-writer/src", &[])];

#[test]
fn library_crates_have_no_module_cycles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut report = String::new();
    for (krate, known) in CRATES {
        let graph = Graph::read(&root.join(krate));
        assert!(
            graph.modules.len() > 5,
            "{krate}: only {} modules found",
            graph.modules.len()
        );
        let cycles = graph.cycles();
        for cycle in &cycles {
            if known.iter().any(|known| known == cycle) {
                continue;
            }
            report.push_str(&format!("{krate}: cycle among {}\n", cycle.join(", ")));
            for (from, to, line) in graph.edges_within(cycle) {
                report.push_str(&format!("    {from} -> {to}: {line}\n"));
            }
        }
        for known in known
            .iter()
            .filter(|known| !cycles.iter().any(|c| c == *known))
        {
            report.push_str(&format!(
                "{krate}: listed cycle among {} is gone: remove it from CRATES\n",
                known.join(", ")
            ));
        }
    }
    assert!(report.is_empty(), "module cycles:\n{report}");
}

/// The checker itself finds a cycle, through a re-export and a `super`.
#[test]
fn module_cycle_checker_finds_a_cycle() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write("lib.rs", "mod a;\nmod b;\npub use self::b::*;\n");
    write("a/mod.rs", "mod c;\nuse self::c::Thing;\n");
    write(
        "a/c.rs",
        "pub struct Thing;\n#[cfg(test)]\nmod tests { use crate::Other; }\n",
    );
    write("b.rs", "pub struct Other;\nfn f() { crate::a::g(); }\n");
    let clean = Graph::read(dir.path());
    assert_eq!(clean.cycles(), Vec::<Vec<String>>::new());
    assert!(clean.edges.contains_key(&("a".into(), "a::c".into())));
    assert!(clean.edges.contains_key(&("b".into(), "a".into())));
    // c names `Other` (defined in b, re-exported by the root) outside its
    // tests: c -> b -> a -> c.
    write(
        "a/c.rs",
        "pub struct Thing;\nfn g() -> crate::Other { crate::Other }\n",
    );
    let cyclic = Graph::read(dir.path());
    assert_eq!(cyclic.cycles(), vec![vec!["a", "a::c", "b"]]);
}

/// Modules (`a::b`, the root is `""`) and the edges between them, each
/// with the first source line that makes it.
struct Graph {
    modules: BTreeMap<String, Module>,
    edges: BTreeMap<(String, String), String>,
}

#[derive(Default)]
struct Module {
    code: String,
    file: PathBuf,
}

impl Graph {
    fn read(src: &Path) -> Graph {
        let mut files = Vec::new();
        collect(src, &mut files);
        let mut modules = BTreeMap::new();
        for file in files {
            let relative = file.strip_prefix(src).expect("under src");
            let mut parts: Vec<String> = relative
                .iter()
                .map(|part| part.to_string_lossy().into_owned())
                .collect();
            let last = parts.pop().expect("file name");
            match last.as_str() {
                "lib.rs" | "main.rs" | "mod.rs" => {}
                name => parts.push(name.trim_end_matches(".rs").to_owned()),
            }
            let text = std::fs::read_to_string(&file).expect("read source");
            let module = Module {
                code: without_tests(&strip_comments(&text)),
                file,
            };
            modules.insert(parts.join("::"), module);
        }
        // Files of test modules (`#[cfg(test)] mod tests;`) are not code.
        let test_modules: Vec<String> = modules
            .iter()
            .flat_map(|(name, module)| {
                let text = strip_comments(&std::fs::read_to_string(&module.file).unwrap());
                cfg_test_mods(&text)
                    .into_iter()
                    .map(move |child| join(name, &child))
            })
            .collect();
        for name in test_modules {
            modules
                .retain(|module, _| module != &name && !module.starts_with(&format!("{name}::")));
        }
        let mut graph = Graph {
            modules,
            edges: BTreeMap::new(),
        };
        let mut edges = BTreeMap::new();
        for (name, module) in &graph.modules {
            let file = module.file.strip_prefix(src).unwrap_or(&module.file);
            for (line, within, path) in paths(&module.code) {
                let from = within
                    .iter()
                    .fold(name.clone(), |at, inner| join(&at, inner));
                if let Some(target) = graph.resolve(&from, &path) {
                    if &target != name {
                        let place = format!("{}:{line}", file.display());
                        edges.entry((name.clone(), target)).or_insert(place);
                    }
                }
            }
        }
        graph.edges = edges;
        graph
    }

    /// The module a path written in `from` names (or whose item it names).
    fn resolve(&self, from: &str, path: &[String]) -> Option<String> {
        let mut segments = path.iter().map(String::as_str).peekable();
        let mut at: Vec<&str> = match segments.peek().copied() {
            Some("crate") => {
                segments.next();
                Vec::new()
            }
            Some("self") => {
                segments.next();
                split(from)
            }
            Some("super") => {
                let mut at = split(from);
                while segments.peek() == Some(&"super") {
                    segments.next();
                    at.pop()?;
                }
                at
            }
            _ => return None,
        };
        for segment in segments {
            if segment == "self" || segment == "*" {
                break;
            }
            let child = join(&at.join("::"), segment);
            if self.modules.contains_key(&child) {
                at.push(segment);
                continue;
            }
            if !self.modules.contains_key(&at.join("::")) {
                // In an inline module: its items are its file's.
                break;
            }
            // An item: the module that defines it, through re-exports.
            return Some(self.defining(&at.join("::"), segment, 0));
        }
        // An inline module counts as the file that holds it.
        while !self.modules.contains_key(&at.join("::")) && at.pop().is_some() {}
        Some(at.join("::"))
    }

    /// The module defining `item` as seen from `module`, following
    /// `pub use` re-exports of child modules.
    fn defining(&self, module: &str, item: &str, depth: usize) -> String {
        let Some(code) = self.modules.get(module).map(|m| &m.code) else {
            return module.to_owned();
        };
        if depth > 8 || defines(code, item) {
            return module.to_owned();
        }
        for (_, _, path) in paths(code) {
            let reexport = path.last().is_some_and(|last| last == "*" || last == item);
            if reexport && path.first().is_some_and(|first| first == "self") {
                let inner: Vec<String> = path[..path.len() - 1].to_vec();
                if let Some(source) = self.resolve(module, &inner) {
                    if source != module {
                        let code = &self.modules[&source].code;
                        if defines(code, item) || path.last().is_some_and(|last| last == item) {
                            return self.defining(&source, item, depth + 1);
                        }
                    }
                }
            }
        }
        module.to_owned()
    }

    /// Strongly connected components of more than one module, by Tarjan.
    fn cycles(&self) -> Vec<Vec<String>> {
        let names: Vec<&String> = self.modules.keys().collect();
        let index_of: BTreeMap<&String, usize> =
            names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); names.len()];
        for (from, to) in self.edges.keys() {
            if let (Some(&a), Some(&b)) = (index_of.get(from), index_of.get(to)) {
                next[a].push(b);
            }
        }
        let mut state = Tarjan {
            next: &next,
            index: vec![None; names.len()],
            low: vec![0; names.len()],
            on_stack: vec![false; names.len()],
            stack: Vec::new(),
            counter: 0,
            found: Vec::new(),
        };
        for v in 0..names.len() {
            if state.index[v].is_none() {
                state.visit(v);
            }
        }
        let mut cycles: Vec<Vec<String>> = state
            .found
            .into_iter()
            .filter(|scc| scc.len() > 1)
            .map(|scc| {
                let mut scc: Vec<String> = scc.into_iter().map(|i| names[i].clone()).collect();
                scc.sort();
                scc
            })
            .collect();
        cycles.sort();
        cycles
    }

    fn edges_within<'g>(&'g self, cycle: &[String]) -> Vec<(&'g str, &'g str, &'g str)> {
        let members: BTreeSet<&String> = cycle.iter().collect();
        self.edges
            .iter()
            .filter(|((from, to), _)| members.contains(from) && members.contains(to))
            .map(|((from, to), line)| (from.as_str(), to.as_str(), line.as_str()))
            .collect()
    }
}

struct Tarjan<'n> {
    next: &'n [Vec<usize>],
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    counter: usize,
    found: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, v: usize) {
        self.index[v] = Some(self.counter);
        self.low[v] = self.counter;
        self.counter += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for &w in &self.next[v] {
            match self.index[w] {
                None => {
                    self.visit(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(index) if self.on_stack[w] => self.low[v] = self.low[v].min(index),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                scc.push(w);
                if w == v {
                    break;
                }
            }
            self.found.push(scc);
        }
    }
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read source dir")
        .map(|entry| entry.expect("dir entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

fn split(module: &str) -> Vec<&str> {
    module.split("::").filter(|part| !part.is_empty()).collect()
}

fn join(module: &str, child: &str) -> String {
    if module.is_empty() {
        child.to_owned()
    } else {
        format!("{module}::{child}")
    }
}

/// Whether `code` defines `item` (a type, function, constant or macro).
fn defines(code: &str, item: &str) -> bool {
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .collect();
    words.windows(2).any(|pair| {
        pair[1] == item
            && matches!(
                pair[0],
                "struct" | "enum" | "union" | "fn" | "type" | "trait" | "const" | "static"
            )
    })
}

/// The source without comments; string and char literals become `""`.
fn strip_comments(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if c == '"' || (c == 'r' && (next == Some('"') || next == Some('#'))) {
            // A (raw) string literal: kept as `""`, newlines kept.
            let start = i;
            let mut hashes = 0;
            if c == 'r' {
                i += 1;
                while chars.get(i) == Some(&'#') {
                    hashes += 1;
                    i += 1;
                }
                if chars.get(i) != Some(&'"') {
                    out.extend(&chars[start..i]);
                    continue;
                }
            }
            i += 1;
            while i < chars.len() {
                if c != 'r' && chars[i] == '\\' {
                    i += 2;
                    continue;
                }
                if chars[i] == '\n' {
                    out.push('\n');
                }
                if chars[i] == '"' && chars[i + 1..].iter().take(hashes).all(|&h| h == '#') {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            out.push_str("\"\"");
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime.
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The names of `#[cfg(test)] mod NAME;` declarations.
fn cfg_test_mods(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        rest = &rest[at + "#[cfg(test)]".len()..];
        let item = rest.trim_start();
        let item = item.strip_prefix("pub(super)").unwrap_or(item).trim_start();
        if let Some(decl) = item.strip_prefix("mod ") {
            let name: String = decl
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if decl[name.len()..].trim_start().starts_with(';') {
                names.push(name);
            }
        }
    }
    names
}

/// The code without the items under `#[cfg(test)]` (lines kept, blanked).
fn without_tests(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        // The item ends at its `;` or at the brace closing its first `{`.
        let mut depth = 0usize;
        let mut end = item.len();
        for (i, c) in item.char_indices().skip("#[cfg(test)]".len()) {
            match c {
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.extend(item[..end].chars().filter(|&c| c == '\n'));
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// Every module path in `code` with its line: each leaf of each `use`
/// tree, and each inline path starting `crate::`, `super::` or `self::`.
fn paths(code: &str) -> Vec<(usize, Vec<String>, Vec<String>)> {
    let tokens = tokenize(code);
    let mut found = Vec::new();
    // Inline modules (`mod name { ... }`) open here, with the brace depth
    // their `}` returns to.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < tokens.len() {
        let (line, token) = &tokens[i];
        let line = *line;
        let within: Vec<String> = inline.iter().map(|(name, _)| name.clone()).collect();
        match token.as_str() {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if inline.last().is_some_and(|&(_, at)| at == depth) {
                    inline.pop();
                }
            }
            "mod" if tokens.get(i + 2).is_some_and(|(_, t)| t == "{") => {
                inline.push((tokens[i + 1].1.clone(), depth));
            }
            _ => {}
        }
        if token == "use" {
            let mut end = i + 1;
            while end < tokens.len() && tokens[end].1 != ";" {
                end += 1;
            }
            let tree: Vec<&str> = tokens[i + 1..end].iter().map(|(_, t)| t.as_str()).collect();
            let mut leaves = Vec::new();
            expand(&tree, &[], &mut leaves);
            found.extend(leaves.into_iter().map(|leaf| (line, within.clone(), leaf)));
            i = end;
            continue;
        }
        let starts_path = matches!(token.as_str(), "crate" | "super" | "self")
            && tokens.get(i + 1).is_some_and(|(_, t)| t == "::")
            && !(i > 0 && tokens[i - 1].1 == "::")
            && !(i > 1 && tokens[i - 1].1 == "in");
        if starts_path {
            let mut path = vec![token.clone()];
            let mut j = i + 1;
            while tokens.get(j).is_some_and(|(_, t)| t == "::") {
                match tokens.get(j + 1) {
                    Some((_, t)) if is_word(t) => path.push(t.clone()),
                    _ => break,
                }
                j += 2;
            }
            found.push((line, within, path));
            i = j;
            continue;
        }
        i += 1;
    }
    found
}

/// The leaves of a `use` tree (`a::{b, c::{d as e, *}}`).
fn expand(tree: &[&str], prefix: &[String], leaves: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    let mut i = 0;
    while i < tree.len() {
        match tree[i] {
            "::" => {}
            "{" => {
                // Split the group at its top-level commas.
                let mut depth = 0;
                let mut start = i + 1;
                for j in i + 1..tree.len() {
                    match tree[j] {
                        "{" => depth += 1,
                        "}" if depth == 0 => {
                            expand(&tree[start..j], &path, leaves);
                            return;
                        }
                        "}" => depth -= 1,
                        "," if depth == 0 => {
                            expand(&tree[start..j], &path, leaves);
                            start = j + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            "as" => break,
            word if is_word(word) || word == "*" => path.push(word.to_owned()),
            _ => {}
        }
        i += 1;
    }
    if path.len() > prefix.len() {
        leaves.push(path);
    }
}

fn is_word(token: &str) -> bool {
    token.chars().all(|c| c.is_alphanumeric() || c == '_') && !token.is_empty()
}

/// Words, `::`, and single punctuation characters, with their lines.
fn tokenize(code: &str) -> Vec<(usize, String)> {
    let mut tokens = Vec::new();
    let mut line = 1;
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push((line, chars[start..i].iter().collect()));
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            tokens.push((line, "::".to_owned()));
            i += 2;
        } else {
            tokens.push((line, c.to_string()));
            i += 1;
        }
    }
    tokens
}
