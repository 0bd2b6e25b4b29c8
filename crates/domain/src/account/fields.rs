//! Field errors of the account forms, keyed by the contract's field names,
//! with Portuguese messages (they are shown on the pages next to the field).

/// One refused field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The form field's name (the contract's, e.g. `data_fim`).
    pub field: &'static str,
    /// What is wrong, in Portuguese.
    pub message: String,
}

/// The refused fields of one form, in the order the form lists them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldErrors(Vec<FieldError>);

impl FieldErrors {
    /// No error yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an error on `field` (a field keeps its first error only).
    pub fn push(&mut self, field: &'static str, message: impl Into<String>) {
        if self.get(field).is_none() {
            self.0.push(FieldError { field, message: message.into() });
        }
    }

    /// The message on `field`, if it was refused.
    pub fn get(&self, field: &str) -> Option<&str> {
        self.0.iter().find(|e| e.field == field).map(|e| e.message.as_str())
    }

    /// Whether every field was accepted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `field` is the first refused one (the page puts the focus
    /// there).
    pub fn is_first(&self, field: &str) -> bool {
        self.0.first().is_some_and(|e| e.field == field)
    }

    /// The refused fields' names, in form order.
    pub fn fields(&self) -> Vec<&'static str> {
        self.0.iter().map(|e| e.field).collect()
    }

    /// Every error, in form order.
    pub fn iter(&self) -> impl Iterator<Item = &FieldError> {
        self.0.iter()
    }
}
