//! The client component's mapping rules: how an attribute map, a lookup
//! field and a scope list (in the credencial service, the settings
//! `user_attr_map`, `user_lookup_field` and `scopes`) turn a profile payload
//! (the answer of `POST /api/perfil/dados/`) into the column values of the
//! host application's user record.
//!
//! The map is `{column: profile_field}`:
//!
//! - a plain key (`"email": "email"`) writes one profile field to one column;
//! - a tuple key (`"(first_name, last_name)": "name"`) splits the text at the
//!   first space: before it to the first column, the rest to the second (no
//!   space: the second column gets an empty string);
//! - `scope.field` (`"birth_date": "receita_federal.dtNascimento"`) reads a
//!   field of an object-shaped scope; only `receita_federal` is one;
//! - a whole scope name (`"bonds": "cnes"`) writes that scope's JSON value,
//!   and `fulljson` the whole payload — both only into a `json`/`jsonb` column;
//! - the plain fields are `name` and `avatar` (scope `dados_publicos`), `cpf`
//!   and `email`.
//!
//! Each column receives one kind of value ([`ValueKind`]): text, a
//! `YYYY-MM-DD` date (`receita_federal.dtNascimento`: a date or text column)
//! or JSON; the values are [`HostValue`]s, ready for the host user port.
//!
//! Parsing checks everything that does not depend on the other inputs (column
//! names, tuple arity, duplicate columns, field names, dot notation);
//! [`AttrMap::validate`] checks the map against the requested scopes, and
//! [`UserMapping::new`] adds the lookup field. Applying never fails for a
//! column: a value the payload does not carry is [`ColumnValue::Skip`], never
//! a null, so an existing value is never overwritten with nothing.
//!
//! Errors name the input ([`MappingInput`]) and the offending key; they
//! never carry profile data (only configuration text).

use std::collections::BTreeSet;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};
use thiserror::Error;

pub use crate::host_table::{ColumnName, IdentifierError};
use crate::host_table::{HostValue, ValueKind};
use crate::registries::is_iso_date;
use crate::scope::{Scope, ScopeSet, ScopeShape};

/// The default attribute map, as JSON text.
pub const DEFAULT_ATTR_MAP: &str = r#"{"username": "cpf", "email": "email", "(first_name, last_name)": "name"}"#;
/// The default lookup column.
pub const DEFAULT_LOOKUP_FIELD: &str = "username";
/// The default requested scopes.
pub const DEFAULT_SCOPES: [Scope; 3] = [Scope::DadosPublicos, Scope::Cpf, Scope::Email];
/// The map value that stores the whole payload in one column.
pub const FULLJSON: &str = "fulljson";

/// The fields of the `receita_federal` object, as the contract names them.
const RECEITA_FIELDS: [&str; 6] = ["nome", "dtNascimento", "sexo", "mae", "noMunicipio", "uf"];
/// The `receita_federal` fields that carry a `YYYY-MM-DD` date.
const RECEITA_DATE_FIELDS: [&str; 1] = ["dtNascimento"];

/// What the attribute map accepts as a value (for error messages).
const ACCEPTED_VALUES: &str = "name, avatar, cpf, email, fulljson, a scope name (receita_federal, cnes, \
                               experiencia_profissional, formacao_academica, cursos_cdp) or receita_federal.<field>";

/// The fields readable with dot notation from an object-shaped scope (empty
/// for every other scope).
pub fn object_fields(scope: Scope) -> &'static [&'static str] {
    match scope.shape() {
        ScopeShape::Object if scope == Scope::ReceitaFederal => &RECEITA_FIELDS,
        _ => &[],
    }
}

/// A plain field at the top level of the profile payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProfileField {
    /// `name` (scope `dados_publicos`).
    Name,
    /// `avatar` (scope `dados_publicos`).
    Avatar,
    /// `cpf` (scope `cpf`).
    Cpf,
    /// `email` (scope `email`).
    Email,
}

impl ProfileField {
    /// Every plain field.
    pub const ALL: [ProfileField; 4] =
        [ProfileField::Name, ProfileField::Avatar, ProfileField::Cpf, ProfileField::Email];

    /// The payload key.
    pub fn key(self) -> &'static str {
        match self {
            ProfileField::Name => "name",
            ProfileField::Avatar => "avatar",
            ProfileField::Cpf => "cpf",
            ProfileField::Email => "email",
        }
    }

    /// The scope that yields the field.
    pub fn scope(self) -> Scope {
        match self {
            ProfileField::Name | ProfileField::Avatar => Scope::DadosPublicos,
            ProfileField::Cpf => Scope::Cpf,
            ProfileField::Email => Scope::Email,
        }
    }
}

/// Where a mapped value comes from (the map's value side).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MappingSource {
    /// A plain top-level field (`name`, `avatar`, `cpf`, `email`).
    Field(ProfileField),
    /// `scope.field` of an object-shaped scope (`receita_federal.nome`).
    ObjectField {
        /// The object-shaped scope.
        scope: Scope,
        /// One of the scope's contract fields.
        field: &'static str,
    },
    /// A whole scope's JSON value (`cnes`, `experiencia_profissional`, ...).
    WholeScope(Scope),
    /// The whole payload (`fulljson`).
    FullJson,
}

/// Why a map value is refused (without the key; [`AttrMapError`] adds it).
#[derive(Debug, Clone, PartialEq, Eq)]
enum SourceError {
    Unknown,
    UnknownScope(String),
    DotOnList(Scope),
    DotOnTopLevel(Scope),
    UnknownObjectField(Scope, String),
}

impl MappingSource {
    fn parse(text: &str) -> Result<Self, SourceError> {
        let text = text.trim();
        if text == FULLJSON {
            return Ok(MappingSource::FullJson);
        }
        if let Some((scope_name, field)) = text.split_once('.') {
            let scope: Scope = scope_name.parse().map_err(|_| SourceError::UnknownScope(scope_name.to_owned()))?;
            return match scope.shape() {
                ScopeShape::ListBearing => Err(SourceError::DotOnList(scope)),
                ScopeShape::TopLevelFields => Err(SourceError::DotOnTopLevel(scope)),
                ScopeShape::Object => object_fields(scope)
                    .iter()
                    .find(|f| **f == field)
                    .map(|f| MappingSource::ObjectField { scope, field: f })
                    .ok_or_else(|| SourceError::UnknownObjectField(scope, field.to_owned())),
            };
        }
        if let Some(field) = ProfileField::ALL.into_iter().find(|f| f.key() == text) {
            return Ok(MappingSource::Field(field));
        }
        match text.parse::<Scope>() {
            Ok(scope) if scope.shape() != ScopeShape::TopLevelFields => Ok(MappingSource::WholeScope(scope)),
            _ => Err(SourceError::Unknown),
        }
    }

    /// The scope the value depends on (`None` for `fulljson`).
    pub fn scope(&self) -> Option<Scope> {
        match self {
            MappingSource::Field(f) => Some(f.scope()),
            MappingSource::ObjectField { scope, .. } | MappingSource::WholeScope(scope) => Some(*scope),
            MappingSource::FullJson => None,
        }
    }

    /// The kind of value it yields.
    pub fn kind(&self) -> ValueKind {
        match self {
            MappingSource::Field(_) => ValueKind::Text,
            MappingSource::ObjectField { field, .. } if RECEITA_DATE_FIELDS.contains(field) => ValueKind::Date,
            MappingSource::ObjectField { .. } => ValueKind::Text,
            MappingSource::WholeScope(_) | MappingSource::FullJson => ValueKind::Json,
        }
    }

    /// The raw value in `payload`, or why there is none.
    fn extract(&self, payload: &Map<String, Value>) -> Result<Value, SkipReason> {
        match self {
            MappingSource::FullJson => Ok(Value::Object(payload.clone())),
            MappingSource::Field(f) => match payload.get(f.key()) {
                None => Err(SkipReason::ScopeAbsent(f.scope())),
                Some(Value::Null) => Err(SkipReason::FieldAbsent),
                Some(v) => Ok(v.clone()),
            },
            MappingSource::WholeScope(scope) => match scope_value(payload, *scope)? {
                Value::Null => Err(SkipReason::ScopeAbsent(*scope)),
                v => Ok(v.clone()),
            },
            MappingSource::ObjectField { scope, field } => match scope_value(payload, *scope)? {
                Value::Object(object) => match object.get(*field) {
                    None | Some(Value::Null) => Err(SkipReason::FieldAbsent),
                    Some(v) => Ok(v.clone()),
                },
                Value::Null => Err(SkipReason::ScopeAbsent(*scope)),
                _ => Err(SkipReason::MalformedScope(*scope)),
            },
        }
    }
}

impl fmt::Display for MappingSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MappingSource::Field(field) => f.write_str(field.key()),
            MappingSource::ObjectField { scope, field } => write!(f, "{scope}.{field}"),
            MappingSource::WholeScope(scope) => write!(f, "{scope}"),
            MappingSource::FullJson => f.write_str(FULLJSON),
        }
    }
}

/// The value under a scope's key, unless the scope is absent or holds an
/// `erro` object.
fn scope_value(payload: &Map<String, Value>, scope: Scope) -> Result<&Value, SkipReason> {
    match payload.get(scope.name()) {
        None => Err(SkipReason::ScopeAbsent(scope)),
        Some(Value::Object(o)) if o.contains_key("erro") => Err(SkipReason::ScopeError(scope)),
        Some(v) => Ok(v),
    }
}

/// Where a mapped value goes (the map's key side).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MappingTarget {
    /// One column (`"email"`).
    Column(ColumnName),
    /// Two columns that share a text split at its first space
    /// (`"(first_name, last_name)"`).
    Split(ColumnName, ColumnName),
}

impl MappingTarget {
    /// The target columns, in order.
    pub fn columns(&self) -> Vec<&ColumnName> {
        match self {
            MappingTarget::Column(c) => vec![c],
            MappingTarget::Split(a, b) => vec![a, b],
        }
    }
}

impl fmt::Display for MappingTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MappingTarget::Column(c) => write!(f, "{c}"),
            MappingTarget::Split(a, b) => write!(f, "({a}, {b})"),
        }
    }
}

/// Splits `text` at its first space: before it, and the rest (empty when
/// there is no space). Nothing is trimmed: `first + " " + rest` is `text`.
pub fn split_at_first_space(text: &str) -> (&str, &str) {
    text.split_once(' ').unwrap_or((text, ""))
}

/// One entry of the attribute map, with the key and value as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// Where the value goes.
    pub target: MappingTarget,
    /// Where it comes from.
    pub source: MappingSource,
    /// The key as written in the map.
    pub key: String,
    /// The value as written in the map.
    pub value: String,
}

/// Which of the client component's three mapping inputs an
/// [`AttrMapError`] is about; a tool names each input its own way (the
/// credencial binary names its settings) with
/// [`AttrMapError::message_naming`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MappingInput {
    /// The attribute map (`{column: profile_field}`).
    AttrMap,
    /// The lookup field (the column of the get-or-create lookup).
    LookupField,
    /// The scope list (the scopes the client requests).
    Scopes,
}

impl MappingInput {
    /// How this crate's own messages name the input: "the attribute map",
    /// "the lookup field", "the scope list".
    pub fn description(self) -> &'static str {
        match self {
            MappingInput::AttrMap => "the attribute map",
            MappingInput::LookupField => "the lookup field",
            MappingInput::Scopes => "the scope list",
        }
    }
}

/// A configuration error of the client component's mapping inputs; the
/// message names the input and the offending key or value (never profile
/// data). `Display` names the inputs as [`MappingInput::description`] does;
/// [`AttrMapError::message_naming`] lets a tool use its own names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrMapError {
    /// The attribute map is not a JSON object.
    NotAnObject(String),
    /// A value is not a string.
    ValueNotAString {
        /// The key as written.
        key: String,
    },
    /// A key (or one column of a tuple key) is not a usable column name.
    BadColumn {
        /// The key as written.
        key: String,
        /// What is wrong with the column name.
        problem: IdentifierError,
    },
    /// A tuple key with other than two columns.
    TupleArity {
        /// The key as written.
        key: String,
        /// How many columns it names.
        found: usize,
    },
    /// Two keys (or both halves of a tuple) write the same column.
    DuplicateColumn {
        /// The key that repeats the column.
        key: String,
        /// The repeated column.
        column: String,
    },
    /// A value that names no profile field.
    UnknownField {
        /// The key as written.
        key: String,
        /// The value as written.
        value: String,
    },
    /// Dot notation on a name that is not a scope.
    UnknownScope {
        /// The key as written.
        key: String,
        /// The value as written.
        value: String,
        /// The part before the dot.
        scope: String,
    },
    /// Dot notation on a scope that returns a list (or an object carrying one).
    DotOnListScope {
        /// The key as written.
        key: String,
        /// The value as written.
        value: String,
        /// The list-shaped scope.
        scope: Scope,
    },
    /// Dot notation on a scope whose fields are at the top level.
    DotOnTopLevelScope {
        /// The key as written.
        key: String,
        /// The value as written.
        value: String,
        /// The scope before the dot.
        scope: Scope,
    },
    /// Dot notation naming a field the scope does not have.
    UnknownObjectField {
        /// The key as written.
        key: String,
        /// The value as written.
        value: String,
        /// The object-shaped scope.
        scope: Scope,
        /// The unknown field.
        field: String,
        /// The scope's fields, comma-separated.
        fields: String,
    },
    /// A tuple key whose value is JSON, not text.
    TupleNeedsText {
        /// The key as written.
        key: String,
        /// The value as written.
        value: String,
    },
    /// A value from a scope the client does not request.
    ScopeNotRequested {
        /// The key as written.
        key: String,
        /// The value as written.
        value: String,
        /// The missing scope.
        scope: Scope,
    },
    /// A requested scope that is not in the contract.
    UnknownRequestedScope {
        /// The unknown name.
        name: String,
    },
    /// The lookup column is not a usable column name.
    BadLookupColumn {
        /// What is wrong with the column name.
        problem: IdentifierError,
    },
    /// The lookup column is not written by the attribute map.
    LookupNotMapped {
        /// The lookup column.
        column: String,
    },
    /// The lookup column is mapped from a value that is not plain text.
    LookupNotText {
        /// The lookup column.
        column: String,
        /// The map value it comes from.
        value: String,
    },
}

impl AttrMapError {
    /// The input the error is about (the one to fix).
    pub fn input(&self) -> MappingInput {
        match self {
            AttrMapError::UnknownRequestedScope { .. } => MappingInput::Scopes,
            AttrMapError::BadLookupColumn { .. }
            | AttrMapError::LookupNotMapped { .. }
            | AttrMapError::LookupNotText { .. } => MappingInput::LookupField,
            _ => MappingInput::AttrMap,
        }
    }

    /// The message, `"<input>: <what is wrong>"`, with every input (the one
    /// at fault and any other it mentions) named by `name`.
    pub fn message_naming(&self, name: impl Fn(MappingInput) -> String) -> String {
        let at_fault = name(self.input());
        let detail = match self {
            AttrMapError::NotAnObject(e) => {
                format!("not a JSON object of column names to profile fields ({e})")
            }
            AttrMapError::ValueNotAString { key } => {
                format!("key {key:?}: the value must be a string naming a profile field")
            }
            AttrMapError::BadColumn { key, problem } => format!("key {key:?}: {problem}"),
            AttrMapError::TupleArity { key, found } => format!(
                "key {key:?}: a tuple key needs exactly two columns, as in \"(first_name, last_name)\"; found {found}"
            ),
            AttrMapError::DuplicateColumn { key, column } => {
                format!("key {key:?}: column {column:?} is already written by another key")
            }
            AttrMapError::UnknownField { key, value } => {
                format!("key {key:?}: {value:?} is not a profile field; expected {ACCEPTED_VALUES}")
            }
            AttrMapError::UnknownScope { key, value, scope } => {
                format!("key {key:?}: {value:?}: {scope:?} is not a scope")
            }
            AttrMapError::DotOnListScope { key, value, scope } => format!(
                "key {key:?}: {value:?}: dot notation reads a field of an object-shaped scope (receita_federal), \
                 but {scope} returns a list; map the whole scope (\"{scope}\") into a jsonb column instead"
            ),
            AttrMapError::DotOnTopLevelScope { key, value, scope } => format!(
                "key {key:?}: {value:?}: {scope} has no nested object; map its field by name \
                 (name, avatar, cpf or email)"
            ),
            AttrMapError::UnknownObjectField { key, value, scope, field, fields } => {
                format!("key {key:?}: {value:?}: {scope} has no field {field:?}; its fields are {fields}")
            }
            AttrMapError::TupleNeedsText { key, value } => {
                format!("key {key:?}: a tuple key splits text, but {value:?} is a JSON value")
            }
            AttrMapError::ScopeNotRequested { key, value, scope } => format!(
                "key {key:?}: {value:?} needs the scope {scope}, which {} does not request",
                name(MappingInput::Scopes)
            ),
            AttrMapError::UnknownRequestedScope { name } => format!(
                "unknown scope {name:?}; allowed: dados_publicos, cpf, email, receita_federal, cnes, \
                 experiencia_profissional, formacao_academica, cursos_cdp"
            ),
            AttrMapError::BadLookupColumn { problem } => problem.to_string(),
            AttrMapError::LookupNotMapped { column } => format!(
                "column {column:?} is not one of the columns of {}, so a login would have no value to look the \
                 user up by",
                name(MappingInput::AttrMap)
            ),
            AttrMapError::LookupNotText { column, value } => format!(
                "column {column:?} is mapped from {value:?}, which is not a plain text value (the lookup column \
                 must come from name, avatar, cpf, email or a text field of receita_federal)"
            ),
        };
        format!("{at_fault}: {detail}")
    }
}

impl fmt::Display for AttrMapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message_naming(|input| input.description().to_owned()))
    }
}

impl std::error::Error for AttrMapError {}

/// The entries of a JSON object in the order written, duplicates kept (a
/// repeated key must be an error, not "last one wins").
struct RawEntries(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for RawEntries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = RawEntries;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawEntries, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    entries.push(entry);
                }
                Ok(RawEntries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor)
    }
}

/// One column the map writes and the kind of value it receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSpec {
    /// The column.
    pub column: ColumnName,
    /// The kind of value written to it.
    pub kind: ValueKind,
}

/// The parsed attribute map: entries in the order written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttrMap {
    entries: Vec<Mapping>,
}

impl Default for AttrMap {
    /// `{"username": "cpf", "email": "email", "(first_name, last_name)": "name"}`.
    fn default() -> Self {
        let column = |name: &str| ColumnName(name.to_owned());
        let entry = |target, field: ProfileField, key: &str| Mapping {
            target,
            source: MappingSource::Field(field),
            key: key.to_owned(),
            value: field.key().to_owned(),
        };
        Self {
            entries: vec![
                entry(MappingTarget::Column(column("username")), ProfileField::Cpf, "username"),
                entry(MappingTarget::Column(column("email")), ProfileField::Email, "email"),
                entry(
                    MappingTarget::Split(column("first_name"), column("last_name")),
                    ProfileField::Name,
                    "(first_name, last_name)",
                ),
            ],
        }
    }
}

impl AttrMap {
    /// Parses the attribute map's JSON text (an object of string values; a
    /// repeated key is an error).
    pub fn from_json(text: &str) -> Result<Self, AttrMapError> {
        let RawEntries(entries) = serde_json::from_str(text).map_err(|e| AttrMapError::NotAnObject(e.to_string()))?;
        let mut pairs = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            match value {
                Value::String(value) => pairs.push((key, value)),
                _ => return Err(AttrMapError::ValueNotAString { key }),
            }
        }
        Self::from_pairs(pairs)
    }

    /// Builds the map from `(key, value)` pairs (e.g. a TOML table).
    pub fn from_pairs<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Self, AttrMapError>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let mut entries = Vec::new();
        let mut seen = BTreeSet::new();
        for (key, value) in pairs {
            let (key, value) = (key.into(), value.into());
            let target = parse_target(&key)?;
            let source = MappingSource::parse(&value).map_err(|e| source_error(e, &key, &value))?;
            if matches!(target, MappingTarget::Split(..)) && source.kind() == ValueKind::Json {
                return Err(AttrMapError::TupleNeedsText { key, value });
            }
            for column in target.columns() {
                if !seen.insert(column.clone()) {
                    return Err(AttrMapError::DuplicateColumn { key, column: column.to_string() });
                }
            }
            entries.push(Mapping { target, source, key, value });
        }
        Ok(Self { entries })
    }

    /// The entries, in the order written.
    pub fn entries(&self) -> &[Mapping] {
        &self.entries
    }

    /// Checks that every scope the map reads is available: the three
    /// required scopes always are, any other must be in `scopes`.
    pub fn validate(&self, scopes: &ClientScopes) -> Result<(), AttrMapError> {
        for entry in &self.entries {
            if let Some(scope) = entry.source.scope() {
                if !scope.is_required() && !scopes.contains(scope) {
                    return Err(AttrMapError::ScopeNotRequested {
                        key: entry.key.clone(),
                        value: entry.value.clone(),
                        scope,
                    });
                }
            }
        }
        Ok(())
    }

    /// Every column the map writes, with the kind of value it receives (for
    /// the start-up check against the host table).
    pub fn columns(&self) -> Vec<ColumnSpec> {
        self.column_needs()
            .into_iter()
            .map(|(column, kind)| ColumnSpec { column: ColumnName(column.to_owned()), kind })
            .collect()
    }

    /// The `(column, kind)` pairs that
    /// [`check_columns`](crate::host_table::check_columns) takes.
    pub fn column_needs(&self) -> Vec<(&str, ValueKind)> {
        let mut out = Vec::new();
        for entry in &self.entries {
            match &entry.target {
                MappingTarget::Column(c) => out.push((c.as_str(), entry.source.kind())),
                MappingTarget::Split(a, b) => {
                    out.push((a.as_str(), ValueKind::Text));
                    out.push((b.as_str(), ValueKind::Text));
                }
            }
        }
        out
    }

    /// The kind of value `column` receives, if the map writes it.
    pub fn kind_of(&self, column: &str) -> Option<ValueKind> {
        self.column_needs().into_iter().find(|(c, _)| *c == column).map(|(_, kind)| kind)
    }

    /// Maps `payload` (a profile answer) to column values: every column is
    /// either set or skipped with the reason; nothing is ever set to null.
    pub fn apply(&self, payload: &Map<String, Value>) -> MappedRecord {
        let mut columns = Vec::new();
        for entry in &self.entries {
            let raw = entry.source.extract(payload);
            match &entry.target {
                MappingTarget::Column(c) => {
                    let value = match raw.and_then(|v| convert(v, entry.source.kind())) {
                        Ok(v) => ColumnValue::Set(v),
                        Err(reason) => ColumnValue::Skip(reason),
                    };
                    columns.push((c.clone(), value));
                }
                MappingTarget::Split(a, b) => match raw.and_then(non_blank_text) {
                    Ok(text) => {
                        let (first, rest) = split_at_first_space(&text);
                        columns.push((a.clone(), ColumnValue::Set(HostValue::Text(first.to_owned()))));
                        columns.push((b.clone(), ColumnValue::Set(HostValue::Text(rest.to_owned()))));
                    }
                    Err(reason) => {
                        columns.push((a.clone(), ColumnValue::Skip(reason)));
                        columns.push((b.clone(), ColumnValue::Skip(reason)));
                    }
                },
            }
        }
        MappedRecord { columns }
    }
}

fn parse_target(key: &str) -> Result<MappingTarget, AttrMapError> {
    let bad = |problem| AttrMapError::BadColumn { key: key.to_owned(), problem };
    let trimmed = key.trim();
    let Some(inner) = trimmed.strip_prefix('(').and_then(|rest| rest.strip_suffix(')')) else {
        return ColumnName::parse(trimmed).map(MappingTarget::Column).map_err(bad);
    };
    let parts: Vec<&str> = if inner.trim().is_empty() { Vec::new() } else { inner.split(',').collect() };
    match parts.as_slice() {
        [first, second] => {
            let first = ColumnName::parse(first).map_err(bad)?;
            let second = ColumnName::parse(second).map_err(bad)?;
            Ok(MappingTarget::Split(first, second))
        }
        _ => Err(AttrMapError::TupleArity { key: key.to_owned(), found: parts.len() }),
    }
}

fn source_error(e: SourceError, key: &str, value: &str) -> AttrMapError {
    let (key, value) = (key.to_owned(), value.to_owned());
    match e {
        SourceError::Unknown => AttrMapError::UnknownField { key, value },
        SourceError::UnknownScope(scope) => AttrMapError::UnknownScope { key, value, scope },
        SourceError::DotOnList(scope) => AttrMapError::DotOnListScope { key, value, scope },
        SourceError::DotOnTopLevel(scope) => AttrMapError::DotOnTopLevelScope { key, value, scope },
        SourceError::UnknownObjectField(scope, field) => {
            AttrMapError::UnknownObjectField { key, value, scope, field, fields: object_fields(scope).join(", ") }
        }
    }
}

/// A text value: strings as they are, numbers as their decimal text.
fn text_of(value: Value) -> Result<String, SkipReason> {
    match value {
        Value::String(s) => Ok(s),
        Value::Number(n) => Ok(n.to_string()),
        Value::Null => Err(SkipReason::FieldAbsent),
        Value::Bool(_) | Value::Array(_) | Value::Object(_) => Err(SkipReason::NotText),
    }
}

/// A text value that is not empty or only spaces (the provider's way of
/// saying "unknown", e.g. the `cpf` of a user without one).
fn non_blank_text(value: Value) -> Result<String, SkipReason> {
    let text = text_of(value)?;
    if text.trim().is_empty() {
        Err(SkipReason::Blank)
    } else {
        Ok(text)
    }
}

fn convert(value: Value, kind: ValueKind) -> Result<HostValue, SkipReason> {
    match kind {
        ValueKind::Text => non_blank_text(value).map(HostValue::Text),
        ValueKind::Date => {
            let text = non_blank_text(value)?;
            if is_iso_date(&text) {
                Ok(HostValue::Date(text))
            } else {
                Err(SkipReason::NotADate)
            }
        }
        ValueKind::Json => match value {
            Value::Null => Err(SkipReason::FieldAbsent),
            v => Ok(HostValue::Json(v)),
        },
        // No map value yields these kinds; refusing is the safe answer.
        ValueKind::Timestamp | ValueKind::Boolean => Err(SkipReason::NotText),
    }
}

/// Why a column is left as it is (on creation: the column's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum SkipReason {
    /// The payload does not carry the scope (not requested, not granted or
    /// not enabled for the client).
    #[error("scope {0} is not in the profile")]
    ScopeAbsent(Scope),
    /// The scope holds an `erro` object (not validated, none registered,
    /// upstream failure).
    #[error("scope {0} is unavailable (erro)")]
    ScopeError(Scope),
    /// The scope's value is not an object, so dot notation cannot read it.
    #[error("scope {0} is not an object")]
    MalformedScope(Scope),
    /// The field is absent or null.
    #[error("the field is absent or null")]
    FieldAbsent,
    /// The text is empty or only spaces.
    #[error("the text is empty")]
    Blank,
    /// A text column, but the value is a boolean, list or object.
    #[error("the value is not text")]
    NotText,
    /// A date column, but the text is not a `YYYY-MM-DD` calendar date.
    #[error("the value is not a YYYY-MM-DD date")]
    NotADate,
}

/// What happens to one column.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnValue {
    /// Write this value: non-blank text for text columns (the second column
    /// of a tuple key may get an empty string), a `YYYY-MM-DD` date, or any
    /// JSON value but null. `Debug` does not show it (personal data).
    Set(HostValue),
    /// Leave the column as it is; on creation it takes its default.
    Skip(SkipReason),
}

/// The result of applying the map to one payload: one entry per mapped
/// column, in the map's order.
#[derive(Debug, Clone, PartialEq)]
pub struct MappedRecord {
    columns: Vec<(ColumnName, ColumnValue)>,
}

impl MappedRecord {
    /// What happens to `column` (`None` if the map does not write it).
    pub fn get(&self, column: &str) -> Option<&ColumnValue> {
        self.columns.iter().find(|(c, _)| c.as_str() == column).map(|(_, v)| v)
    }

    /// Every mapped column with what happens to it.
    pub fn iter(&self) -> impl Iterator<Item = (&ColumnName, &ColumnValue)> {
        self.columns.iter().map(|(c, v)| (c, v))
    }

    /// The columns to write, with their values.
    pub fn values_to_set(&self) -> impl Iterator<Item = (&ColumnName, &HostValue)> {
        self.columns.iter().filter_map(|(c, v)| match v {
            ColumnValue::Set(value) => Some((c, value)),
            ColumnValue::Skip(_) => None,
        })
    }

    /// The columns to write, owned, in the form the host user port's
    /// `upsert` takes.
    pub fn into_values(self) -> Vec<(ColumnName, HostValue)> {
        self.columns
            .into_iter()
            .filter_map(|(c, v)| match v {
                ColumnValue::Set(value) => Some((c, value)),
                ColumnValue::Skip(_) => None,
            })
            .collect()
    }

    /// The columns left alone, with the reason.
    pub fn skipped(&self) -> impl Iterator<Item = (&ColumnName, SkipReason)> {
        self.columns.iter().filter_map(|(c, v)| match v {
            ColumnValue::Skip(reason) => Some((c, *reason)),
            ColumnValue::Set(_) => None,
        })
    }
}

/// The parsed scope list: the scopes the client requests, always with
/// `dados_publicos`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientScopes(ScopeSet);

impl Default for ClientScopes {
    /// `dados_publicos cpf email`.
    fn default() -> Self {
        Self(DEFAULT_SCOPES.into_iter().collect())
    }
}

impl ClientScopes {
    /// Parses scope names strictly (only the contract's eight); an item may
    /// itself hold several names separated by spaces. `dados_publicos` is
    /// added when missing.
    pub fn parse<I, S>(names: I) -> Result<Self, AttrMapError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut set = ScopeSet::empty();
        set.insert(Scope::DadosPublicos);
        for item in names {
            for name in item.as_ref().split_ascii_whitespace() {
                let scope =
                    name.parse::<Scope>().map_err(|_| AttrMapError::UnknownRequestedScope { name: name.to_owned() })?;
                set.insert(scope);
            }
        }
        Ok(Self(set))
    }

    /// The requested scopes.
    pub fn scopes(&self) -> ScopeSet {
        self.0
    }

    /// Whether `scope` is requested.
    pub fn contains(&self, scope: Scope) -> bool {
        self.0.contains(scope)
    }

    /// The space-separated form for the authorization request.
    pub fn to_scope_string(&self) -> String {
        self.0.to_scope_string()
    }
}

/// The parsed lookup field: the column of the get-or-create lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookupField(ColumnName);

impl Default for LookupField {
    /// `username`.
    fn default() -> Self {
        Self(ColumnName(DEFAULT_LOOKUP_FIELD.to_owned()))
    }
}

impl LookupField {
    /// Checks that `text` is a plain column name.
    pub fn parse(text: &str) -> Result<Self, AttrMapError> {
        ColumnName::parse(text).map(Self).map_err(|problem| AttrMapError::BadLookupColumn { problem })
    }

    /// The column.
    pub fn column(&self) -> &ColumnName {
        &self.0
    }
}

/// The three mapping inputs, checked against each other: what the client
/// component applies after a login.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserMapping {
    map: AttrMap,
    lookup: LookupField,
    scopes: ClientScopes,
}

/// A login cannot proceed: the payload has no usable value for the lookup
/// column.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("the profile has no value for the lookup column {column} ({reason})")]
pub struct LookupUnavailable {
    /// The lookup column.
    pub column: ColumnName,
    /// Why it has no value.
    pub reason: SkipReason,
}

/// A payload mapped for one login: the lookup value and every column.
#[derive(Debug, Clone, PartialEq)]
pub struct MappedUser {
    /// The lookup column.
    pub lookup_column: ColumnName,
    /// Its value (non-blank text).
    pub lookup_value: String,
    /// Every mapped column, the lookup column included.
    pub record: MappedRecord,
}

impl UserMapping {
    /// Checks the map against the requested scopes, and that the lookup
    /// column is one of the map's columns and receives plain text.
    pub fn new(map: AttrMap, lookup: LookupField, scopes: ClientScopes) -> Result<Self, AttrMapError> {
        map.validate(&scopes)?;
        let column = lookup.column().as_str();
        let entry = map
            .entries()
            .iter()
            .find(|e| e.target.columns().iter().any(|c| c.as_str() == column))
            .ok_or_else(|| AttrMapError::LookupNotMapped { column: column.to_owned() })?;
        if map.kind_of(column) != Some(ValueKind::Text) {
            return Err(AttrMapError::LookupNotText { column: column.to_owned(), value: entry.value.clone() });
        }
        Ok(Self { map, lookup, scopes })
    }

    /// The attribute map.
    pub fn map(&self) -> &AttrMap {
        &self.map
    }

    /// The lookup column.
    pub fn lookup(&self) -> &LookupField {
        &self.lookup
    }

    /// The requested scopes.
    pub fn scopes(&self) -> &ClientScopes {
        &self.scopes
    }

    /// Maps `payload`; fails only when the lookup column gets no non-blank
    /// text (a login cannot proceed without it).
    pub fn apply(&self, payload: &Map<String, Value>) -> Result<MappedUser, LookupUnavailable> {
        let record = self.map.apply(payload);
        let column = self.lookup.column().clone();
        let reason = match record.get(column.as_str()) {
            Some(ColumnValue::Set(HostValue::Text(text))) if !text.trim().is_empty() => {
                let lookup_value = text.clone();
                return Ok(MappedUser { lookup_column: column, lookup_value, record });
            }
            Some(ColumnValue::Skip(reason)) => *reason,
            Some(ColumnValue::Set(HostValue::Text(_))) => SkipReason::Blank,
            // Unreachable after `new`'s checks (text column, always mapped);
            // refusing is the safe answer.
            Some(ColumnValue::Set(_)) => SkipReason::NotText,
            None => SkipReason::FieldAbsent,
        };
        Err(LookupUnavailable { column, reason })
    }
}

#[cfg(test)]
mod tests;
