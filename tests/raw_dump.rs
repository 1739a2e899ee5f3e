//! A reader for bpftool's raw BTF dump (`bpftool btf dump file F`), so that
//! tests can state facts such as "struct fx_spanning has size 9" without
//! caring which type id the encoder picked.
//!
//! The format, one type per line, members indented by a tab:
//! `[ID] KIND 'NAME' key=value key=value` then `\t'MEMBER' key=value`.

use std::path::Path;

/// One type of a dump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpedType {
    /// Type id (1-based; 0 is void and never printed).
    pub id: u32,
    /// Kind as bpftool spells it: `STRUCT`, `FUNC_PROTO`, ...
    pub kind: String,
    /// The name between quotes; `(anon)` for anonymous types.
    pub name: String,
    /// Everything after the name, e.g. `size=9 vlen=4`.
    pub attrs: String,
    /// The member / parameter / enumerator / section entry lines, without
    /// the leading tab.
    pub members: Vec<String>,
}

/// A parsed dump, in type-id order.
#[derive(Debug, Clone, Default)]
pub struct Dump {
    /// The types as printed.
    pub types: Vec<DumpedType>,
}

impl Dump {
    /// bpftool's dump of `file` (on `base` for a split), parsed; panics
    /// with bpftool's output when it fails, as a test helper should.
    pub fn of_file(file: &Path, base: Option<&Path>) -> Dump {
        let run = crate::tools::bpftool_btf_dump(file, base);
        run.assert_success();
        Dump::parse(&run.stdout_text())
            .unwrap_or_else(|err| panic!("bpftool's dump of {}: {err}", file.display()))
    }

    /// Parses bpftool's raw text. Errors name the offending line.
    pub fn parse(text: &str) -> Result<Dump, String> {
        let mut types: Vec<DumpedType> = Vec::new();
        for (index, line) in text.lines().enumerate() {
            if let Some(member) = line.strip_prefix('\t') {
                let Some(owner) = types.last_mut() else {
                    return Err(format!(
                        "line {}: member before any type: {line:?}",
                        index + 1
                    ));
                };
                owner.members.push(member.to_string());
            } else if !line.is_empty() {
                let parsed = parse_type_line(line)
                    .ok_or_else(|| format!("line {}: not a type line: {line:?}", index + 1))?;
                types.push(parsed);
            }
        }
        Ok(Dump { types })
    }

    /// The type with id `id`.
    pub fn get(&self, id: u32) -> Option<&DumpedType> {
        self.types.iter().find(|ty| ty.id == id)
    }

    /// Every type of `kind` named `name`.
    pub fn find_all(&self, kind: &str, name: &str) -> Vec<&DumpedType> {
        self.types
            .iter()
            .filter(|ty| ty.kind == kind && ty.name == name)
            .collect()
    }

    /// The single type of `kind` named `name`; panics (this is a test
    /// helper) when there is none or more than one.
    pub fn one(&self, kind: &str, name: &str) -> &DumpedType {
        let found = self.find_all(kind, name);
        match found.as_slice() {
            [only] => only,
            [] => panic!("no {kind} '{name}' in the dump"),
            many => panic!(
                "{} copies of {kind} '{name}' in the dump: {many:?}",
                many.len()
            ),
        }
    }

    /// The type `ty`'s `type_id=` names (a VAR's, FUNC's, DECL_TAG's,
    /// pointer's... target), if it names one the dump has.
    pub fn target(&self, ty: &DumpedType) -> Option<&DumpedType> {
        ty.type_id().and_then(|id| self.get(id))
    }

    /// Follows `type_id=` links from `id` (modifiers, typedefs, pointers,
    /// arrays, vars, funcs) and returns every type visited, `id` first.
    /// Stops at a type without a `type_id`, at void, or after 64 steps.
    pub fn chain(&self, id: u32) -> Vec<&DumpedType> {
        let mut visited = Vec::new();
        let mut next = Some(id);
        while let Some(current) = next.filter(|&id| id != 0) {
            let Some(ty) = self.get(current) else { break };
            visited.push(ty);
            if visited.len() >= 64 {
                break;
            }
            next = ty.type_id();
        }
        visited
    }

    /// `chain` rendered as `KIND 'name' -> KIND 'name' -> ...`, which
    /// reads well in assertions.
    pub fn chain_text(&self, id: u32) -> String {
        self.chain(id)
            .iter()
            .map(|ty| format!("{} '{}'", ty.kind, ty.name))
            .collect::<Vec<_>>()
            .join(" -> ")
    }

    /// How many types of each kind, sorted by kind.
    pub fn kind_counts(&self) -> std::collections::BTreeMap<String, usize> {
        let mut counts = std::collections::BTreeMap::new();
        for ty in &self.types {
            *counts.entry(ty.kind.clone()).or_insert(0) += 1;
        }
        counts
    }
}

impl DumpedType {
    /// The value of `key=` on the type line (`size`, `vlen`, `type_id`...).
    pub fn attr(&self, key: &str) -> Option<&str> {
        find_attr(&self.attrs, key)
    }

    /// The type line's `type_id` as a number.
    pub fn type_id(&self) -> Option<u32> {
        self.attr("type_id").and_then(|id| id.parse().ok())
    }

    /// The line of the member (or parameter, enumerator) named `name`.
    pub fn member(&self, name: &str) -> Option<&str> {
        let quoted = format!("'{name}' ");
        self.members
            .iter()
            .find(|line| line.starts_with(&quoted))
            .map(String::as_str)
    }

    /// The value of `key=` on the line of member `name`.
    pub fn member_attr(&self, name: &str, key: &str) -> Option<&str> {
        self.member(name).and_then(|line| find_attr(line, key))
    }

    /// The member's `type_id` as a number.
    pub fn member_type(&self, name: &str) -> Option<u32> {
        self.member_attr(name, "type_id")
            .and_then(|id| id.parse().ok())
    }
}

fn parse_type_line(line: &str) -> Option<DumpedType> {
    let rest = line.strip_prefix('[')?;
    let (id, rest) = rest.split_once("] ")?;
    let (kind, rest) = rest.split_once(' ')?;
    let rest = rest.strip_prefix('\'')?;
    let (name, attrs) = rest.split_once('\'')?;
    Some(DumpedType {
        id: id.parse().ok()?,
        kind: kind.to_string(),
        name: name.to_string(),
        attrs: attrs.trim().to_string(),
        members: Vec::new(),
    })
}

/// `key=value` lookup in a line; values end at whitespace or a comma
/// (bpftool prints `VAR 'x' type_id=5, linkage=global`).
fn find_attr<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.split_whitespace().find_map(|word| {
        let (word_key, value) = word.split_once('=')?;
        (word_key == key).then(|| value.trim_end_matches(','))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Shapes copied from bpftool's format, values invented for the test.
    const SAMPLE: &str = "[1] INT 'int' size=4 bits_offset=0 nr_bits=32 encoding=SIGNED\n\
[2] STRUCT 's' size=8 vlen=2\n\
\t'a' type_id=1 bits_offset=0 bitfield_size=3\n\
\t'b' type_id=3 bits_offset=32\n\
[3] CONST '(anon)' type_id=1\n\
[4] VAR 'v' type_id=3, linkage=global\n";

    #[test]
    fn parses_types_members_and_attributes() {
        let dump = Dump::parse(SAMPLE).unwrap();
        assert_eq!(dump.types.len(), 4);
        let s = dump.one("STRUCT", "s");
        assert_eq!(s.attr("size"), Some("8"));
        assert_eq!(s.member_attr("a", "bitfield_size"), Some("3"));
        assert_eq!(s.member_type("b"), Some(3));
        assert_eq!(s.member("c"), None);
        assert_eq!(dump.one("VAR", "v").attr("type_id"), Some("3"));
        assert_eq!(dump.chain_text(4), "VAR 'v' -> CONST '(anon)' -> INT 'int'");
        assert_eq!(dump.kind_counts().get("INT"), Some(&1));
    }

    #[test]
    fn rejects_garbage() {
        assert!(Dump::parse("\tmember first\n").is_err());
        assert!(Dump::parse("not a dump\n").is_err());
    }
}
