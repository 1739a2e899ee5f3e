//! Reading the few location facts BTF needs: where a parameter lives at
//! function entry, and a static variable's address.

use gimli::{AttributeValue, Operation, Reader as _};

use crate::model::{ParamEntry, ParamLocation};
use crate::reader::Reader;

/// `DW_OP_reg0`..`DW_OP_reg31`: only these count as "in a register" for
/// pahole (not `DW_OP_regx`).
const DW_OP_REG0: u8 = 0x50;
const DW_OP_REG31: u8 = 0x6f;
const DW_OP_STACK_VALUE: u8 = 0x9f;

/// DWARF numbers of the integer argument registers, in argument order, for
/// an ELF `e_machine`: the registers pahole expects parameters in
/// (`arch__set_register_params`). Empty for machines it has no list for.
pub fn register_params(machine: u16) -> &'static [u16] {
    use object::elf;
    match machine {
        // rdi, rsi, rdx, rcx, r8, r9
        m if m == elf::EM_X86_64.0 => &[5, 4, 1, 2, 8, 9],
        // x0-x7
        m if m == elf::EM_AARCH64.0 => &[0, 1, 2, 3, 4, 5, 6, 7],
        // r2-r6
        m if m == elf::EM_S390.0 => &[2, 3, 4, 5, 6],
        // a0-a7
        m if m == elf::EM_RISCV.0 => &[10, 11, 12, 13, 14, 15, 16, 17],
        _ => &[],
    }
}

/// pahole's (dwarves 1436daf) `arch__set_register_params`: the
/// `DW_OP_regN` number expected for each argument index, for the machines
/// it lists (x86-64, s390, arm, aarch64). Indices past the list (up to
/// [`nr_register_params`]) expect no register at all, which its rules
/// then treat as matching nothing.
pub fn entry_register_params(machine: u16) -> &'static [u8] {
    use object::elf;
    match machine {
        // rdi, rsi, rdx, rcx, r8, r9
        m if m == elf::EM_X86_64.0 => &[5, 4, 1, 2, 8, 9],
        // r2-r6
        m if m == elf::EM_S390.0 => &[2, 3, 4, 5, 6],
        // r0-r7 / x0-x7
        m if m == elf::EM_ARM.0 || m == elf::EM_AARCH64.0 => &[0, 1, 2, 3, 4, 5, 6, 7],
        _ => &[],
    }
}

/// pahole's `arch__agg_use_two_regs`: whether an aggregate wider than a
/// register may travel in two (everywhere but s390).
pub fn aggregates_use_two_registers(machine: u16) -> bool {
    machine != object::elf::EM_S390.0
}

/// How many leading parameters pahole checks the location of
/// (`arch__nr_register_params`); it treats later ones as having no
/// location at all. 0 for machines it does not know.
pub fn nr_register_params(machine: u16) -> usize {
    use object::elf;
    match machine {
        m if m == elf::EM_S390.0 => 5,
        m if m == elf::EM_SPARC.0 || m == elf::EM_SPARCV9.0 || m == elf::EM_X86_64.0 => 6,
        m if m == elf::EM_AARCH64.0
            || m == elf::EM_ARC.0
            || m == elf::EM_ARM.0
            || m == elf::EM_MIPS.0
            || m == elf::EM_PPC.0
            || m == elf::EM_PPC64.0
            || m == elf::EM_RISCV.0 =>
        {
            8
        }
        _ => 0,
    }
}

/// One operation's opcode byte and its parsed form.
type Op<'input> = (u8, Operation<Reader<'input>>);

/// The next operation of an expression; `None` at its end or if it is
/// malformed.
fn next_op<'input>(input: &mut Reader<'input>, encoding: gimli::Encoding) -> Option<Op<'input>> {
    let opcode = *input.slice().first()?;
    let op = Operation::parse(input, encoding).ok()?;
    Some((opcode, op))
}

/// The operation an expression consists of, if it is exactly one, and
/// well-formed; with `stack_value`, "X, DW_OP_stack_value" counts as "X"
/// too. `None` for anything else, including a malformed expression (an
/// unknown location, like libdw's failure, rather than failing the CU).
/// Longer expressions are not read to their end: they are of no use
/// whether malformed or not.
fn sole_op<'input>(
    expr: Reader<'input>,
    encoding: gimli::Encoding,
    stack_value: bool,
) -> Option<Op<'input>> {
    let mut input = expr;
    let first = next_op(&mut input, encoding)?;
    if input.is_empty() {
        return Some(first);
    }
    if !stack_value {
        return None;
    }
    let (opcode, _) = next_op(&mut input, encoding)?;
    (input.is_empty() && opcode == DW_OP_STACK_VALUE).then_some(first)
}

/// pahole's `parameter__reg`: the register a parameter is in at entry.
/// A `DW_OP_regN` counts only in the first location; an
/// `DW_OP_entry_value(DW_OP_regN)` counts anywhere. The expected register
/// wins as soon as it is seen; otherwise the last register seen is it.
fn parameter_register(
    exprs: &[Reader<'_>],
    encoding: gimli::Encoding,
    expected: Option<u16>,
) -> Option<u16> {
    let mut found = None;
    for (index, expr) in exprs.iter().enumerate() {
        let Some((opcode, op)) = sole_op(*expr, encoding, true) else {
            continue;
        };
        let register = match op {
            Operation::Register { register } if (DW_OP_REG0..=DW_OP_REG31).contains(&opcode) => {
                if index != 0 {
                    continue;
                }
                register.0
            }
            Operation::EntryValue { expression } => match sole_op(expression, encoding, false) {
                Some((inner, Operation::Register { register }))
                    if (DW_OP_REG0..=DW_OP_REG31).contains(&inner) =>
                {
                    register.0
                }
                _ => continue,
            },
            _ => continue,
        };
        found = Some(register);
        if Some(register) == expected {
            break;
        }
    }
    found
}

/// A formal parameter's location, read once: as the model's
/// [`ParamLocation`] (`index` is its position among the function's
/// parameters) and as pahole 1436daf's [`ParamEntry`] (`parameter__new`,
/// `parameter__decode_location`). `scratch` is a buffer for the
/// expressions of a location list.
pub(crate) fn param_facts<'input>(
    dwarf: &gimli::Dwarf<Reader<'input>>,
    unit: &gimli::Unit<Reader<'input>>,
    location: Option<AttributeValue<Reader<'input>>>,
    has_const_value: bool,
    register_params: &[u16],
    index: usize,
    scratch: &mut Vec<Reader<'input>>,
) -> (ParamLocation, ParamEntry) {
    let mut entry = ParamEntry {
        has_location: location.is_some(),
        has_const_value,
        ..ParamEntry::default()
    };
    let Some(location) = location else {
        let location = if has_const_value {
            ParamLocation::Constant
        } else {
            ParamLocation::OptimizedOut
        };
        return (location, entry);
    };
    let single;
    let exprs: &[Reader<'input>] = match location {
        AttributeValue::Exprloc(expr) => {
            single = expr.0;
            std::slice::from_ref(&single)
        }
        AttributeValue::Block(block) => {
            single = block;
            std::slice::from_ref(&single)
        }
        other => {
            raw_list_expressions(dwarf, unit, other, scratch);
            scratch
        }
    };
    decode_locations(exprs, unit.encoding(), &mut entry);
    let expected = register_params.get(index).copied();
    let location = match parameter_register(exprs, unit.encoding(), expected) {
        Some(register) => ParamLocation::Register(register),
        None => ParamLocation::Other,
    };
    (location, entry)
}

/// `DW_OP_breg0`..`DW_OP_breg31`.
const DW_OP_BREG0: u8 = 0x70;
const DW_OP_BREG31: u8 = 0x8f;
/// `DW_OP_lit0`..`DW_OP_lit31`, `DW_OP_constu`, `DW_OP_consts`.
const DW_OP_LIT0: u8 = 0x30;
const DW_OP_LIT31: u8 = 0x4f;
const DW_OP_CONSTU: u8 = 0x10;
const DW_OP_CONSTS: u8 = 0x11;
const DW_OP_ENTRY_VALUE: u8 = 0xa3;
const DW_OP_GNU_ENTRY_VALUE: u8 = 0xf3;

fn is_reg(opcode: u8) -> bool {
    (DW_OP_REG0..=DW_OP_REG31).contains(&opcode)
}

fn is_breg(opcode: u8) -> bool {
    (DW_OP_BREG0..=DW_OP_BREG31).contains(&opcode)
}

fn is_constant(opcode: u8) -> bool {
    (DW_OP_LIT0..=DW_OP_LIT31).contains(&opcode) || opcode == DW_OP_CONSTU || opcode == DW_OP_CONSTS
}

/// pahole's `parameter__set_loc_reg`: the first register seen stays.
fn set_first(register: &mut Option<u8>, value: u8) {
    if register.is_none() {
        *register = Some(value);
    }
}

/// What pahole's location rules look at in one expression.
#[derive(Clone, Copy)]
struct ExprSummary<'input> {
    /// Number of operations.
    len: usize,
    first: u8,
    last: u8,
    /// A `DW_OP_stack_value` after the first operation.
    stack_value_after_first: bool,
    /// The first `DW_OP_regN` operation.
    first_reg: Option<u8>,
    /// The operand of the first entry-value operation.
    entry_value: Option<Reader<'input>>,
}

/// Reads every operation of an expression; `None` if it is empty or
/// malformed (libdw then fails the whole location list, and pahole stops
/// reading it: [`Err`]).
fn summarize(expr: Reader<'_>, encoding: gimli::Encoding) -> Result<Option<ExprSummary<'_>>, ()> {
    let mut input = expr;
    let mut summary: Option<ExprSummary<'_>> = None;
    while !input.is_empty() {
        let (opcode, op) = next_op(&mut input, encoding).ok_or(())?;
        let entry_value = match op {
            Operation::EntryValue { expression } => Some(expression),
            _ => None,
        };
        let reg = is_reg(opcode).then_some(opcode);
        match summary.as_mut() {
            None => {
                summary = Some(ExprSummary {
                    len: 1,
                    first: opcode,
                    last: opcode,
                    stack_value_after_first: false,
                    first_reg: reg,
                    entry_value,
                })
            }
            Some(summary) => {
                summary.len += 1;
                summary.last = opcode;
                summary.stack_value_after_first |= opcode == DW_OP_STACK_VALUE;
                summary.first_reg = summary.first_reg.or(reg);
                summary.entry_value = summary.entry_value.or(entry_value);
            }
        }
    }
    Ok(summary)
}

/// pahole's `parameter__decode_location` (with `parameter__multi_exprs`)
/// over the location expressions of one parameter, in list order, into
/// `entry`'s two readings of `loc_reg`. `DW_OP_fbreg` and constants only
/// matter to pahole's `true_signature` rules (`loc_stack`,
/// `loc_const_value`, and the pieces of a wide aggregate).
fn decode_locations(exprs: &[Reader<'_>], encoding: gimli::Encoding, entry: &mut ParamEntry) {
    let mut fields = [0u64; 2];
    decode_location_list(exprs, encoding, entry, &mut fields);
    entry.piece_halves = u8::from(fields[0] != 0) | (u8::from(fields[1] != 0) << 1);
    entry.piece_member_offset = piece_member_offset(fields, encoding.address_size);
}

fn decode_location_list(
    exprs: &[Reader<'_>],
    encoding: gimli::Encoding,
    entry: &mut ParamEntry,
    fields: &mut [u64; 2],
) {
    for (loc_num, expr) in exprs.iter().enumerate() {
        let summary = match summarize(*expr, encoding) {
            Ok(Some(summary)) => summary,
            Ok(None) => continue,
            Err(()) => break,
        };
        let first = summary.first;
        let had_stack_value = summary.last == DW_OP_STACK_VALUE;
        let len = if summary.len == 2 && had_stack_value {
            1
        } else {
            summary.len
        };
        if len != 1 {
            // parameter__multi_exprs: a constant first says nothing but
            // that (in the first location) the value is a constant.
            if is_constant(first) {
                entry.loc_const_value |= loc_num == 0;
                continue;
            }
            record_pieces(*expr, encoding, fields);
            // Read as a value of at most a register's size: only the
            // first operation, in the first location.
            if loc_num == 0 {
                if is_reg(first) {
                    set_first(&mut entry.register, first - DW_OP_REG0);
                } else if is_breg(first) && summary.stack_value_after_first {
                    set_first(&mut entry.register, first - DW_OP_BREG0);
                }
            }
            // Read as an aggregate in two registers: any register piece,
            // in any location.
            if let Some(reg) = summary.first_reg {
                set_first(&mut entry.wide_register, reg - DW_OP_REG0);
            }
            continue;
        }
        if loc_num == 0 {
            entry.loc_stack |= first == DW_OP_FBREG;
            entry.loc_const_value |= is_constant(first);
        }
        let found = match first {
            op if is_reg(op) && loc_num == 0 => Some(op - DW_OP_REG0),
            op if is_breg(op) && loc_num == 0 && had_stack_value => Some(op - DW_OP_BREG0),
            DW_OP_ENTRY_VALUE | DW_OP_GNU_ENTRY_VALUE => summary
                .entry_value
                .and_then(|inner| sole_op(inner, encoding, false))
                .map(|(op, _)| op)
                .filter(|&op| is_reg(op))
                .map(|op| op - DW_OP_REG0),
            _ => None,
        };
        if let Some(reg) = found {
            set_first(&mut entry.register, reg);
            set_first(&mut entry.wide_register, reg);
        }
    }
}

/// `DW_OP_piece`.
const DW_OP_PIECE: u8 = 0x93;
/// `DW_OP_fbreg`.
const DW_OP_FBREG: u8 = 0x91;

/// pahole's `parameter__multi_exprs` for an aggregate wider than a
/// register: the byte offset where each `DW_OP_piece` after the first
/// operation starts goes to `fields[0]` (below `ADDR_SIZE`) or, less
/// `ADDR_SIZE`, to `fields[1]`; a leading `DW_OP_piece` only moves the
/// offset. Offsets outside 0..64 are not recorded. The lowering reads the
/// result only for such aggregates, on machines that pass them in two
/// registers.
fn record_pieces(expr: Reader<'_>, encoding: gimli::Encoding, fields: &mut [u64; 2]) {
    let addr_size = i64::from(encoding.address_size);
    let mut input = expr;
    let mut offset: i64 = 0;
    let mut index = 0usize;
    while let Some((opcode, op)) = next_op(&mut input, encoding) {
        if opcode == DW_OP_PIECE {
            let bytes = match op {
                Operation::Piece { size_in_bits, .. } => (size_in_bits / 8) as i64,
                _ => 0,
            };
            if index == 0 {
                offset = bytes;
            } else {
                let (slot, at) = if offset < addr_size {
                    (0, offset)
                } else {
                    (1, offset - addr_size)
                };
                if (0..64).contains(&at) {
                    fields[slot] |= 1u64 << at;
                }
                offset = offset.saturating_add(bytes);
            }
        }
        index += 1;
    }
}

/// pahole's `parameter__finish_piece_decode`: when the pieces put exactly
/// one member in exactly one of the two halves, its byte offset.
pub(crate) fn piece_member_offset(fields: [u64; 2], address_size: u8) -> Option<u8> {
    let [first, second] = fields;
    if (first == 0) == (second == 0) || first.count_ones() >= 2 || second.count_ones() >= 2 {
        return None;
    }
    // trailing_zeros of a non-zero u64 is below 64.
    if first.count_ones() == 1 {
        u8::try_from(first.trailing_zeros()).ok()
    } else {
        address_size.checked_add(u8::try_from(second.trailing_zeros()).ok()?)
    }
}

/// The expressions of a location list as libdw's `dwarf_getlocations`
/// hands them to pahole: every entry that has one, in order, including
/// entries with an empty address range (gcc writes `[X, X)` entries for
/// location views, and such an entry is then pahole's first location),
/// read up to where the list stops being readable. Into `exprs`, cleared
/// first.
fn raw_list_expressions<'input>(
    dwarf: &gimli::Dwarf<Reader<'input>>,
    unit: &gimli::Unit<Reader<'input>>,
    value: AttributeValue<Reader<'input>>,
    exprs: &mut Vec<Reader<'input>>,
) {
    use gimli::RawLocListEntry as Entry;
    exprs.clear();
    let Ok(Some(offset)) = dwarf.attr_locations_offset(unit, value) else {
        return;
    };
    let Ok(mut iter) = dwarf.raw_locations(unit, offset) else {
        return;
    };
    while let Ok(Some(entry)) = iter.next() {
        match entry {
            Entry::BaseAddress { .. } | Entry::BaseAddressx { .. } => {}
            Entry::AddressOrOffsetPair { data, .. }
            | Entry::OffsetPair { data, .. }
            | Entry::StartxEndx { data, .. }
            | Entry::StartxLength { data, .. }
            | Entry::DefaultLocation { data }
            | Entry::StartEnd { data, .. }
            | Entry::StartLength { data, .. } => exprs.push(data.0),
        }
    }
}

/// The address of a static-storage variable: the operand of a leading
/// `DW_OP_addr` or `DW_OP_addrx` in a single location expression.
pub(crate) fn static_address<'input>(
    dwarf: &gimli::Dwarf<Reader<'input>>,
    unit: &gimli::Unit<Reader<'input>>,
    location: &AttributeValue<Reader<'input>>,
) -> Option<u64> {
    let mut expr = match location {
        AttributeValue::Exprloc(expr) => expr.0,
        AttributeValue::Block(block) => *block,
        _ => return None,
    };
    match Operation::parse(&mut expr, unit.encoding()).ok()? {
        Operation::Address { address } => Some(address),
        Operation::AddressIndex { index } => dwarf.address(unit, index).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoding() -> gimli::Encoding {
        gimli::Encoding {
            format: gimli::Format::Dwarf32,
            version: 5,
            address_size: 8,
        }
    }

    fn reader(bytes: &[u8]) -> Reader<'_> {
        gimli::EndianSlice::new(bytes, gimli::RunTimeEndian::Little)
    }

    #[test]
    fn register_rules_follow_pahole() {
        // DW_OP_reg5 first: rdi, as expected for parameter 0 on x86_64.
        assert_eq!(
            parameter_register(&[reader(&[0x55])], encoding(), Some(5)),
            Some(5)
        );
        // DW_OP_reg3 only in a later location does not count.
        assert_eq!(
            parameter_register(
                &[reader(&[0x91, 0x08]), reader(&[0x53])],
                encoding(),
                Some(5)
            ),
            None
        );
        // DW_OP_entry_value(DW_OP_reg4), DW_OP_stack_value anywhere counts.
        let entry = [0xa3, 0x01, 0x54, 0x9f];
        assert_eq!(
            parameter_register(&[reader(&[0x53]), reader(&entry)], encoding(), Some(4)),
            Some(4)
        );
        // An unexpected first register is still reported.
        assert_eq!(
            parameter_register(&[reader(&[0x53])], encoding(), Some(5)),
            Some(3)
        );
        // DW_OP_regx is not a DW_OP_regN for pahole.
        assert_eq!(
            parameter_register(&[reader(&[0x90, 0x05])], encoding(), Some(5)),
            None
        );
    }

    /// Expressions of one operation (or one and `DW_OP_stack_value`),
    /// and nothing else, are read as that operation; malformed ones are
    /// not, wherever the fault.
    #[test]
    fn only_sole_operations_are_read() {
        let sole = |bytes: &[u8], stack_value| {
            sole_op(reader(bytes), encoding(), stack_value).map(|(opcode, _)| opcode)
        };
        assert_eq!(sole(&[0x55], false), Some(0x55));
        assert_eq!(sole(&[0x55, 0x9f], true), Some(0x55));
        assert_eq!(sole(&[0x55, 0x9f], false), None);
        assert_eq!(sole(&[0x9f, 0x9f], true), Some(0x9f));
        assert_eq!(sole(&[0x55, 0x54], true), None);
        assert_eq!(sole(&[0x55, 0x54, 0x9f], true), None);
        assert_eq!(sole(&[], true), None);
        // DW_OP_const1u without its operand, first or second.
        assert_eq!(sole(&[0x08], true), None);
        assert_eq!(sole(&[0x55, 0x08], true), None);
        // An entry value whose inner expression is cut short.
        let entry = [0xa3, 0x02, 0x54];
        assert_eq!(
            parameter_register(&[reader(&entry)], encoding(), Some(4)),
            None
        );
    }

    /// pahole 1436daf's `parameter__decode_location` on hand-made
    /// location lists (opcodes from the DWARF 5 standard).
    #[test]
    fn entry_facts_follow_pahole_1436daf() {
        let decode = |exprs: &[&[u8]]| {
            let readers: Vec<Reader<'_>> = exprs.iter().map(|bytes| reader(bytes)).collect();
            let mut entry = ParamEntry::default();
            decode_locations(&readers, encoding(), &mut entry);
            (entry.register, entry.wide_register)
        };
        // __device_attach's allow_async (clang 14): DW_OP_reg15 first,
        // then DW_OP_entry_value(DW_OP_reg4), DW_OP_stack_value: the
        // first register seen stays, even though rsi is the expected one.
        let entry_rsi: &[u8] = &[0xa3, 0x01, 0x54, 0x9f];
        assert_eq!(decode(&[&[0x5f], entry_rsi, &[0x5f]]), (Some(15), Some(15)));
        // An entry value counts in any location; a plain register only in
        // the first.
        assert_eq!(
            decode(&[&[0x91, 0x08], &[0x53], entry_rsi]),
            (Some(4), Some(4))
        );
        // DW_OP_breg4 RSI+0, DW_OP_constu 0xffffffff, DW_OP_and,
        // DW_OP_stack_value (clang's _Bool): rsi, first location only.
        let breg: &[u8] = &[0x74, 0x00, 0x10, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x1a, 0x9f];
        assert_eq!(decode(&[breg]), (Some(4), None));
        assert_eq!(decode(&[&[0x91, 0x08], breg]), (None, None));
        // DW_OP_bregN alone (an address, not a value): nothing; with
        // only DW_OP_stack_value after it: the register.
        assert_eq!(decode(&[&[0x75, 0x00]]), (None, None));
        assert_eq!(decode(&[&[0x75, 0x00, 0x9f]]), (Some(5), Some(5)));
        // Pieces (clang's __int128 in rdi:rsi): as a narrow value, the
        // first operation of the first location; as a wide aggregate,
        // the first register piece of any location.
        let pieces: &[u8] = &[0x55, 0x93, 0x08, 0x54, 0x93, 0x08];
        let later_half: &[u8] = &[0x93, 0x08, 0x54, 0x93, 0x08];
        assert_eq!(decode(&[pieces]), (Some(5), Some(5)));
        assert_eq!(decode(&[later_half, pieces]), (None, Some(4)));
        // A constant first operation: no register in either reading.
        assert_eq!(decode(&[&[0x30, 0x9f, 0x55]]), (None, None));
        // DW_OP_regx is not a DW_OP_regN; an empty expression still
        // counts as a location (DW_OP_reg5 after it is not the first).
        assert_eq!(decode(&[&[0x90, 0x05]]), (None, None));
        assert_eq!(decode(&[&[], &[0x55]]), (None, None));
        // A malformed expression ends the list, as libdw's error does.
        assert_eq!(decode(&[&[0x08], entry_rsi]), (None, None));
    }

    /// pahole 1436daf's `parameter__multi_exprs` piece bookkeeping and
    /// `parameter__finish_piece_decode`, on hand-made expressions.
    #[test]
    fn pieces_follow_pahole_1436daf() {
        let pieces = |bytes: &[u8]| {
            let mut fields = [0u64; 2];
            record_pieces(reader(bytes), encoding(), &mut fields);
            fields
        };
        // DW_OP_reg5, DW_OP_piece 8, DW_OP_reg4, DW_OP_piece 8: one piece
        // in each half: the whole aggregate, no single member.
        let both = pieces(&[0x55, 0x93, 0x08, 0x54, 0x93, 0x08]);
        assert_eq!(both, [1, 1]);
        assert_eq!(piece_member_offset(both, 8), None);
        // DW_OP_reg5, DW_OP_piece 8 (clang's `a` of which only f1 is
        // used): the member at byte 0.
        let first = pieces(&[0x55, 0x93, 0x08]);
        assert_eq!(first, [1, 0]);
        assert_eq!(piece_member_offset(first, 8), Some(0));
        // DW_OP_piece 8, DW_OP_reg4, DW_OP_piece 8: a leading piece only
        // moves the offset; the member at byte 8.
        let second = pieces(&[0x93, 0x08, 0x54, 0x93, 0x08]);
        assert_eq!(second, [0, 1]);
        assert_eq!(piece_member_offset(second, 8), Some(8));
        // Two pieces in the first half (4 + 4 bytes): no single member.
        let two = pieces(&[0x55, 0x93, 0x04, 0x54, 0x93, 0x04]);
        assert_eq!(two, [0b1_0001, 0]);
        assert_eq!(piece_member_offset(two, 8), None);
        // The first-location facts true_signature reads.
        let facts = |exprs: &[&[u8]]| {
            let readers: Vec<Reader<'_>> = exprs.iter().map(|bytes| reader(bytes)).collect();
            let mut entry = ParamEntry::default();
            decode_locations(&readers, encoding(), &mut entry);
            (entry.loc_stack, entry.loc_const_value)
        };
        assert_eq!(facts(&[&[0x91, 0x08]]), (true, false));
        assert_eq!(facts(&[&[0x55], &[0x91, 0x08]]), (false, false));
        assert_eq!(facts(&[&[0x33, 0x9f]]), (false, true));
        assert_eq!(facts(&[&[0x10, 0x05, 0x55, 0x9f]]), (false, true));
    }

    #[test]
    fn entries_merge_as_recode_shares_them() {
        let located = |register| ParamEntry {
            has_location: true,
            register: Some(register),
            wide_register: Some(register),
            ..ParamEntry::default()
        };
        let mut abstract_param = ParamEntry {
            has_const_value: true,
            ..ParamEntry::default()
        };
        abstract_param.merge(located(5));
        abstract_param.merge(ParamEntry::default());
        assert_eq!(abstract_param.register, Some(5));
        // A later concrete copy's register replaces the earlier one.
        abstract_param.merge(located(3));
        assert_eq!(abstract_param.register, Some(3));
        assert!(abstract_param.has_location && abstract_param.has_const_value);
    }

    #[test]
    fn x86_64_argument_registers() {
        assert_eq!(
            register_params(object::elf::EM_X86_64.0),
            &[5, 4, 1, 2, 8, 9]
        );
        assert!(register_params(0xffff).is_empty());
    }
}
