//! Settings whose text has a meaning (an algorithm, a URL, a level, a table
//! name): read into their type by the loader, so that a wrong value is
//! reported with its setting's name and start-up never parses it again;
//! written back as the same text (the defaults in the documentation).

use serde::{Deserialize, Deserializer, Serializer};

/// A value written as one piece of text.
pub trait SettingText: Sized {
    /// The value `text` stands for, or why it stands for none.
    fn from_text(text: &str) -> Result<Self, String>;
    /// The text that stands for the value.
    fn to_text(&self) -> String;
}

/// Reads a [`SettingText`] value.
pub fn deserialize<'de, D: Deserializer<'de>, T: SettingText>(d: D) -> Result<T, D::Error> {
    let text = String::deserialize(d)?;
    T::from_text(&text).map_err(serde::de::Error::custom)
}

/// Writes a [`SettingText`] value.
pub fn serialize<S: Serializer, T: SettingText>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&value.to_text())
}

/// The same for an optional value (unset: none).
pub mod option {
    use super::*;

    /// Reads an optional [`SettingText`] value.
    pub fn deserialize<'de, D: Deserializer<'de>, T: SettingText>(d: D) -> Result<Option<T>, D::Error> {
        super::deserialize(d).map(Some)
    }

    /// Writes an optional [`SettingText`] value.
    pub fn serialize<S: Serializer, T: SettingText>(value: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(value) => s.serialize_str(&value.to_text()),
            None => s.serialize_none(),
        }
    }
}

impl SettingText for credencial_domain::JwtAlgorithm {
    fn from_text(text: &str) -> Result<Self, String> {
        text.parse().map_err(|e: <Self as std::str::FromStr>::Err| e.to_string())
    }
    fn to_text(&self) -> String {
        self.to_string()
    }
}

impl SettingText for credencial_domain::oauth::discovery::IssuerUrl {
    fn from_text(text: &str) -> Result<Self, String> {
        Self::parse(text).map_err(|e| e.to_string())
    }
    fn to_text(&self) -> String {
        self.as_str().to_owned()
    }
}

impl SettingText for credencial_adapters_upstream::BaseUrl {
    fn from_text(text: &str) -> Result<Self, String> {
        Self::parse(text).map_err(|e| e.to_string())
    }
    fn to_text(&self) -> String {
        self.to_string()
    }
}

impl SettingText for credencial_domain::federation::ReliabilityLevel {
    fn from_text(text: &str) -> Result<Self, String> {
        Self::from_name(text).ok_or_else(|| "must be bronze, prata or ouro".to_owned())
    }
    fn to_text(&self) -> String {
        self.name().to_owned()
    }
}

impl SettingText for credencial_domain::host_table::TableName {
    fn from_text(text: &str) -> Result<Self, String> {
        Self::parse(text).map_err(|_| "must be a plain table name ([a-z_][a-z0-9_]*, at most 63 characters)".to_owned())
    }
    fn to_text(&self) -> String {
        self.to_string()
    }
}
