//! Descriptions as text, for the report's examples.

use std::fmt::Write as _;

use super::desc::{Desc, Interner, MemberDesc, NodeId, RefKind};
use crate::dump::{fwd_kind_name, int_encoding_name, linkage_name, signedness};

/// Rendered descriptions longer than this are cut, so that one huge
/// struct cannot flood a report.
pub(super) const MAX_RENDERED_LEN: usize = 2000;

/// Nesting beyond this is rendered as `...`; descriptions of valid BTF are
/// far shallower, and rendering recurses.
const MAX_RENDER_DEPTH: usize = 48;

impl Interner<'_> {
    pub(super) fn render(&self, node: NodeId) -> String {
        let mut out = String::new();
        self.render_into(&mut out, node, 0);
        if out.len() > MAX_RENDERED_LEN {
            let mut cut = MAX_RENDERED_LEN;
            while !out.is_char_boundary(cut) {
                cut -= 1;
            }
            out.truncate(cut);
            out.push_str("...");
        }
        out
    }

    fn render_into(&self, out: &mut String, node: NodeId, depth: usize) {
        if depth > MAX_RENDER_DEPTH || out.len() > MAX_RENDERED_LEN {
            out.push_str("...");
            return;
        }
        let Some(desc) = self.nodes.get(node as usize) else {
            out.push_str("<?>");
            return;
        };
        let depth = depth + 1;
        // `write!` into a String cannot fail.
        match desc {
            Desc::Void => out.push_str("void"),
            Desc::Dangling => out.push_str("<dangling>"),
            Desc::Cycle => out.push_str("<cycle>"),
            Desc::Ref(kind, name) => {
                let kind = match kind {
                    RefKind::Struct => "struct",
                    RefKind::Union => "union",
                    RefKind::Enum => "enum",
                    RefKind::Enum64 => "enum64",
                    RefKind::FwdStruct => "fwd struct",
                    RefKind::FwdUnion => "fwd union",
                    RefKind::Typedef => "typedef",
                };
                let _ = write!(out, "{kind} {name}");
            }
            Desc::Int {
                name,
                size,
                encoding,
                offset,
                bits,
            } => {
                // Only unusual offsets and widths are shown, to keep the
                // examples readable; they are compared all the same.
                let encoding = int_encoding_name(*encoding);
                let _ = write!(out, "INT '{name}' size={size} encoding={encoding}");
                if *offset != 0 {
                    let _ = write!(out, " bits_offset={offset}");
                }
                if u64::from(*bits) != u64::from(*size) * 8 {
                    let _ = write!(out, " nr_bits={bits}");
                }
            }
            Desc::Ptr(ty) => self.render_wrapped(out, "PTR", *ty, depth),
            Desc::Volatile(ty) => self.render_wrapped(out, "VOLATILE", *ty, depth),
            Desc::Const(ty) => self.render_wrapped(out, "CONST", *ty, depth),
            Desc::Restrict(ty) => self.render_wrapped(out, "RESTRICT", *ty, depth),
            Desc::Array {
                elem,
                index,
                nelems,
            } => {
                self.render_wrapped(out, "ARRAY", *elem, depth);
                let _ = write!(out, "[{nelems}] index=");
                self.render_into(out, *index, depth);
            }
            Desc::Struct {
                name,
                size,
                kind_flag,
                members,
            } => self.render_aggregate(out, "STRUCT", name, *size, *kind_flag, members, depth),
            Desc::Union {
                name,
                size,
                kind_flag,
                members,
            } => self.render_aggregate(out, "UNION", name, *size, *kind_flag, members, depth),
            Desc::Enum {
                name,
                size,
                signed,
                values,
            } => render_enum(out, "ENUM", name, *size, *signed, values),
            Desc::Enum64 {
                name,
                size,
                signed,
                values,
            } => render_enum(out, "ENUM64", name, *size, *signed, values),
            Desc::Fwd { name, union } => {
                let _ = write!(out, "FWD '{name}' fwd_kind={}", fwd_kind_name(*union));
            }
            Desc::Typedef { name, ty } => {
                let _ = write!(out, "TYPEDEF '{name}' = ");
                self.render_into(out, *ty, depth);
            }
            Desc::TypeTag {
                name,
                ty,
                attribute,
            } => {
                let _ = write!(out, "TYPE_TAG '{name}'{}(", attribute_mark(*attribute));
                self.render_into(out, *ty, depth);
                out.push(')');
            }
            Desc::Func { name, ty, linkage } => {
                let _ = write!(out, "FUNC '{name}' linkage={} ", linkage_name(*linkage));
                self.render_into(out, *ty, depth);
            }
            Desc::Var { name, ty, linkage } => {
                let _ = write!(out, "VAR '{name}' linkage={} ", linkage_name(*linkage));
                self.render_into(out, *ty, depth);
            }
            Desc::FuncProto { ret, params } => {
                out.push_str("FUNC_PROTO (");
                for (i, (name, ty)) in params.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    let _ = write!(out, "'{name}': ");
                    self.render_into(out, *ty, depth);
                }
                out.push_str(") -> ");
                self.render_into(out, *ret, depth);
            }
            Desc::Datasec { name, size, vars } => {
                let _ = write!(out, "DATASEC '{name}'");
                if let Some(size) = size {
                    let _ = write!(out, " size={size}");
                }
                out.push_str(" {");
                for (i, (ty, offset, size)) in vars.iter().enumerate() {
                    if i > 0 {
                        out.push_str("; ");
                    }
                    self.render_into(out, *ty, depth);
                    if let Some(offset) = offset {
                        let _ = write!(out, " @{offset}");
                    }
                    let _ = write!(out, " size={size}");
                }
                out.push('}');
            }
            Desc::Float { name, size } => {
                let _ = write!(out, "FLOAT '{name}' size={size}");
            }
            Desc::DeclTag {
                name,
                ty,
                component_idx,
                attribute,
            } => {
                let _ = write!(
                    out,
                    "DECL_TAG '{name}'{} component_idx={component_idx} on ",
                    attribute_mark(*attribute)
                );
                self.render_into(out, *ty, depth);
            }
        }
    }

    fn render_wrapped(&self, out: &mut String, kind: &str, ty: NodeId, depth: usize) {
        out.push_str(kind);
        out.push('(');
        self.render_into(out, ty, depth);
        out.push(')');
    }

    #[allow(clippy::too_many_arguments)]
    fn render_aggregate(
        &self,
        out: &mut String,
        kind: &str,
        name: &str,
        size: u32,
        kind_flag: bool,
        members: &[MemberDesc<'_>],
        depth: usize,
    ) {
        let _ = write!(
            out,
            "{kind} '{name}' size={size} kflag={} {{",
            u8::from(kind_flag)
        );
        for (i, (member, ty, bit_offset, bitfield_size)) in members.iter().enumerate() {
            if i > 0 {
                out.push_str("; ");
            }
            let _ = write!(out, "'{member}': ");
            self.render_into(out, *ty, depth);
            let _ = write!(out, " @{bit_offset}");
            if *bitfield_size != 0 {
                let _ = write!(out, ":{bitfield_size}");
            }
        }
        out.push('}');
    }
}

fn render_enum(
    out: &mut String,
    kind: &str,
    name: &str,
    size: u32,
    signed: bool,
    values: &[(&str, u64)],
) {
    let encoding = signedness(signed);
    let _ = write!(out, "{kind} '{name}' size={size} encoding={encoding} {{");
    for (i, (value_name, value)) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        if signed {
            let _ = write!(out, "{value_name}={}", *value as i64);
        } else {
            let _ = write!(out, "{value_name}={value}");
        }
    }
    out.push('}');
}

/// How a kind_flag (attribute) TYPE_TAG or DECL_TAG is told apart from a
/// plain tag of the same name.
fn attribute_mark(attribute: bool) -> &'static str {
    if attribute {
        " attribute"
    } else {
        ""
    }
}
