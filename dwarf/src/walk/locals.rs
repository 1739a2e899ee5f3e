//! Telling, by abbreviation alone, that a variable in a function body
//! cannot reach the model.
//!
//! Of a function body's variables only static ones are kept, and a
//! variable is static when its `DW_AT_location` is an expression that is
//! an address (see [`super::location::static_address`]). Most local
//! variables of an optimised kernel have no location at all or a location
//! list: their abbreviation already says they are of no interest, so they
//! can be skipped undecoded like any other unwanted DIE instead of having
//! every wanted attribute read (names, types, locations) to be dropped.

use gimli::constants as dw;

/// Whether variables of a declaration with `specs` can never have a
/// static address. The first `DW_AT_location` counts, as in the attribute
/// plans; forms that may hold an expression (the block forms, which gimli
/// reads as expressions for a location, and `DW_FORM_indirect`, whose form
/// only the DIE gives) may be static.
pub(super) fn never_static(specs: &[gimli::AttributeSpecification]) -> bool {
    let location = specs.iter().find(|spec| spec.name() == dw::DW_AT_location);
    !matches!(
        location.map(|spec| spec.form()),
        Some(
            dw::DW_FORM_exprloc
                | dw::DW_FORM_block
                | dw::DW_FORM_block1
                | dw::DW_FORM_block2
                | dw::DW_FORM_block4
                | dw::DW_FORM_indirect,
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Code 1 of a `.debug_abbrev` holding one childless variable
    /// abbreviation with `specs`.
    fn variable(specs: &[(dw::DwAt, dw::DwForm)]) -> Vec<gimli::AttributeSpecification> {
        let mut bytes = vec![1u8, dw::DW_TAG_variable.0 as u8, 0];
        for &(name, form) in specs {
            // Every name and form used here fits one LEB128 byte.
            bytes.push(name.0 as u8);
            bytes.push(form.0 as u8);
        }
        bytes.extend([0, 0, 0]);
        let abbreviations = gimli::DebugAbbrev::new(&bytes, gimli::LittleEndian)
            .abbreviations(gimli::DebugAbbrevOffset(0))
            .expect("abbreviations parse");
        abbreviations.get(1).expect("code 1").attributes().to_vec()
    }

    #[test]
    fn only_expression_locations_may_be_static() {
        let name = (dw::DW_AT_name, dw::DW_FORM_strp);
        let ty = (dw::DW_AT_type, dw::DW_FORM_ref4);
        assert!(never_static(&variable(&[name, ty])));
        for form in [
            dw::DW_FORM_sec_offset,
            dw::DW_FORM_loclistx,
            dw::DW_FORM_data4,
        ] {
            let abbrev = variable(&[name, ty, (dw::DW_AT_location, form)]);
            assert!(never_static(&abbrev), "{form}");
        }
        for form in [
            dw::DW_FORM_exprloc,
            dw::DW_FORM_block1,
            dw::DW_FORM_indirect,
        ] {
            let abbrev = variable(&[name, (dw::DW_AT_location, form), ty]);
            assert!(!never_static(&abbrev), "{form}");
        }
        // The first location counts.
        let abbrev = variable(&[
            (dw::DW_AT_location, dw::DW_FORM_sec_offset),
            (dw::DW_AT_location, dw::DW_FORM_exprloc),
        ]);
        assert!(never_static(&abbrev));
    }
}
