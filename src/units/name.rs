//! The name of a choice, as a person types it and as every output writes it. It is the name
//! its clap derive gives (`#[derive(clap::ValueEnum)]`: the variant in kebab-case, or its
//! `#[value(name = …)]`), so an option's value, a probe's parameter and a label are one
//! string from one source, and a renamed variant renames all of them. An enum that only a
//! file holds is named by its serde derive instead ([`serde_name`]); one whose words are
//! neither (a label, a journal's word, a run file's word that reads back with a fallback,
//! or a second name beside the option's or serde's) by its strum derive ([`Word`]).

/// A clap value enum whose names are read once from its derive ([`named!`]).
pub trait Named: clap::ValueEnum + PartialEq + 'static {
    /// Each variant's possible value, in `value_variants` order (None for a skipped one).
    fn possible_values() -> &'static [Option<clap::builder::PossibleValue>];

    /// This value's name ("" only for a variant the derive skips, which no value enum of
    /// oscost has).
    fn name(&self) -> &'static str {
        Self::value_variants()
            .iter()
            .position(|v| v == self)
            .and_then(|i| Self::possible_values()[i].as_ref())
            .map_or("", |v| v.get_name())
    }

    /// The value whose name (not alias) is `s`.
    fn from_name(s: &str) -> Option<Self> {
        Self::value_variants()
            .iter()
            .find(|v| v.name() == s)
            .cloned()
    }
}

/// Implements [`Named`] for value enums: `named!(Kind, Touch);`.
macro_rules! named {
    ($($t:ty),+ $(,)?) => {$(
        impl $crate::units::name::Named for $t {
            fn possible_values() -> &'static [Option<clap::builder::PossibleValue>] {
                static VALUES: std::sync::OnceLock<Vec<Option<clap::builder::PossibleValue>>> =
                    std::sync::OnceLock::new();
                VALUES.get_or_init(|| {
                    <$t as clap::ValueEnum>::value_variants()
                        .iter()
                        .map(clap::ValueEnum::to_possible_value)
                        .collect()
                })
            }
        }
    )+};
}
pub(crate) use named;

/// The name serde's derive gives a unit variant (its `rename_all` or `rename`): the word a
/// run file holds, for outputs that write the same word without serde (CSV, the store).
/// "" for a value that serializes to no string.
pub fn serde_name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// The words strum's `IntoStaticStr` derive gives a value (its `#[strum(serialize = …)]`,
/// or the enum's `serialize_all` case); where the enum also derives `EnumString`, `parse`
/// reads them back.
pub trait Word: Copy + Into<&'static str> {
    fn word(self) -> &'static str {
        self.into()
    }
}

impl<T: Copy + Into<&'static str>> Word for T {}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Asserts that `table` gives each value its words and that every word leads back to its
    /// value alone (name → value → name): no two values share words.
    pub(crate) fn assert_words<T: Word + PartialEq + std::fmt::Debug>(table: &[(T, &str)]) {
        for &(v, w) in table {
            assert_eq!(v.word(), w, "{v:?}");
            let back: Vec<T> = table
                .iter()
                .map(|t| t.0)
                .filter(|t| t.word() == w)
                .collect();
            assert_eq!(back, [v], "{w:?}");
        }
    }

    #[derive(Debug, Clone, Copy, PartialEq, strum::IntoStaticStr, strum::EnumString)]
    #[strum(serialize_all = "lowercase")]
    enum Worded {
        TimeBudget,
        #[strum(serialize = "one round")]
        OneRound,
    }

    #[test]
    fn words_are_strum_s_and_parse_back_exactly() {
        assert_words(&[
            (Worded::TimeBudget, "timebudget"),
            (Worded::OneRound, "one round"),
        ]);
        assert_eq!("one round".parse(), Ok(Worded::OneRound));
        for wrong in ["One round", "oneround", "OneRound", ""] {
            assert!(wrong.parse::<Worded>().is_err(), "{wrong:?}");
        }
    }

    #[test]
    #[should_panic(expected = "\"x\"")]
    fn words_two_values_share_fail_the_check() {
        #[derive(Debug, Clone, Copy, PartialEq, strum::IntoStaticStr)]
        enum Twice {
            #[strum(serialize = "x")]
            A,
            #[strum(serialize = "x")]
            B,
        }
        assert_words(&[(Twice::A, "x"), (Twice::B, "x")]);
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
    enum Shape {
        RoundCorner,
        #[value(name = "4k", alias = "small")]
        Small,
    }
    named!(Shape);

    #[derive(serde::Serialize)]
    #[serde(rename_all = "snake_case")]
    enum Stored {
        BelowResolution,
        #[serde(rename = "ok")]
        Fine,
        Held(u8),
    }

    #[test]
    fn a_serde_name_is_the_derive_s_and_only_a_unit_variant_has_one() {
        assert_eq!(serde_name(&Stored::BelowResolution), "below_resolution");
        assert_eq!(serde_name(&Stored::Fine), "ok");
        assert_eq!(serde_name(&Stored::Held(1)), "");
        assert_eq!(serde_name(&3u8), "");
    }

    #[test]
    fn names_are_the_derives_and_parse_back_without_aliases() {
        assert_eq!(Shape::RoundCorner.name(), "round-corner");
        assert_eq!(Shape::Small.name(), "4k");
        assert_eq!(Shape::from_name("4k"), Some(Shape::Small));
        assert_eq!(Shape::from_name("small"), None);
        assert_eq!(Shape::from_name("round_corner"), None);
    }
}
