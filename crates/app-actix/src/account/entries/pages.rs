//! The entry pages' templates: the list with its add form
//! (`templates/account/entries.html`), the edit form
//! (`account/entry.html`) and the delete confirmation
//! (`account/entry_delete.html`). One set serves both kinds: a
//! [`Section`] says how a kind is named and where it lives, and a form is
//! a list of [`FieldView`]s.

use askama::Template;
use credencial_domain::account::{EntryForm, EntryKind, FieldErrors};
use credencial_domain::Degree;
use credencial_ports::account::OwnEntry;

use crate::html::Frame;
use crate::html::{Site, PROVIDER};

/// How the pages name one kind of entry and where it lives.
#[derive(Debug)]
pub struct Section {
    /// Which list.
    pub kind: EntryKind,
    /// The list's path (`/conta/experiencias/`), one of the frame's
    /// sections.
    pub path: &'static str,
    /// The list page's title.
    pub title: &'static str,
    /// One entry, capitalised (`Experiência`), for headings and notices.
    pub one: &'static str,
    /// One entry in running text (`experiência`; both kinds are
    /// feminine nouns).
    pub word: &'static str,
    /// What the list says when it is empty.
    pub none: &'static str,
    /// The label of the place field.
    pub place_label: &'static str,
    /// The label of the subject field.
    pub subject_label: &'static str,
}

/// The professional experiences' pages.
pub const EXPERIENCES: Section = Section {
    kind: EntryKind::Experience,
    path: "/conta/experiencias/",
    title: "Experiências profissionais",
    one: "Experiência",
    word: "experiência",
    none: "Nenhuma experiência profissional cadastrada.",
    place_label: "Estabelecimento",
    subject_label: "Profissão",
};

/// The academic degrees' pages.
pub const DEGREES: Section = Section {
    kind: EntryKind::Degree,
    path: "/conta/formacoes/",
    title: "Formações acadêmicas",
    one: "Formação",
    word: "formação",
    none: "Nenhuma formação acadêmica cadastrada.",
    place_label: "Instituição",
    subject_label: "Curso",
};

impl Section {
    /// The edit form's path of entry `id`.
    pub fn entry_path(&self, id: i64) -> String {
        format!("{}{id}/", self.path)
    }

    /// The delete confirmation's path of entry `id`.
    pub fn delete_path(&self, id: i64) -> String {
        format!("{}{id}/excluir/", self.path)
    }

    /// The notice after a change (`?ok=` of the list): `adicionada`,
    /// `salva`, `excluida`; `None` for anything else.
    pub fn notice(&self, ok: &str) -> Option<String> {
        let done = match ok {
            "adicionada" => "adicionada",
            "salva" => "salva",
            "excluida" => "excluída",
            _ => return None,
        };
        Some(format!("{} {done}.", self.one))
    }

    fn label(&self, field: &str) -> &'static str {
        match field {
            _ if field == self.kind.place_field() => self.place_label,
            _ if field == self.kind.subject_field() => self.subject_label,
            "grau_formacao" => "Grau de formação",
            "data_inicio" => "Data de início",
            "data_fim" => "Data de término",
            "municipio" => "Município",
            _ => "Descrição",
        }
    }
}

/// One field of an entry form, as the template draws it.
#[derive(Debug)]
pub struct FieldView<'a> {
    /// The field's name (the contract's) and its element's id.
    pub name: &'static str,
    /// Its label.
    pub label: &'static str,
    /// `text`, `date`, `select` or `textarea`.
    pub input: &'static str,
    /// What it holds (as typed, or as stored).
    pub value: &'a str,
    /// Whether it must be filled.
    pub required: bool,
    /// A hint under the label, if any.
    pub hint: Option<&'static str>,
    /// Why it was refused, if it was.
    pub error: Option<&'a str>,
    /// The options of a `select`: value, text, selected.
    pub options: Vec<(&'static str, &'static str, bool)>,
}

impl FieldView<'_> {
    /// The ids of the hint and error that describe the field, for
    /// `aria-describedby` (empty when none).
    pub fn described_by(&self) -> String {
        let mut ids = Vec::new();
        if self.hint.is_some() {
            ids.push(format!("dica-{}", self.name));
        }
        if self.error.is_some() {
            ids.push(format!("erro-{}", self.name));
        }
        ids.join(" ")
    }
}

/// An entry form: where it posts, its hidden fields and its fields.
#[derive(Debug)]
pub struct FormView<'a> {
    /// Where it posts.
    pub action: String,
    /// The anti-forgery token.
    pub hidden: Vec<(&'static str, &'a str)>,
    /// The fields, in form order.
    pub fields: Vec<FieldView<'a>>,
    /// The submit button's text.
    pub submit: &'static str,
}

impl FormView<'_> {
    /// Whether `name` is the first refused field (it takes the focus).
    pub fn is_first_error(&self, name: &str) -> bool {
        self.fields.iter().find(|f| f.error.is_some()).is_some_and(|f| f.name == name)
    }
}

/// The form of `section` at `action`, holding `form` and the refusals in
/// `errors`.
pub fn form_view<'a>(
    section: &Section,
    action: String,
    token: &'a str,
    form: &EntryForm<'a>,
    errors: Option<&'a FieldErrors>,
    submit: &'static str,
) -> FormView<'a> {
    let kind = section.kind;
    let fields = kind
        .fields()
        .iter()
        .map(|&name| {
            let value = form.value(kind, name);
            let (input, required, hint) = match name {
                "grau_formacao" => ("select", true, None),
                "data_inicio" => ("date", true, Some("Dia, mês e ano.")),
                "data_fim" => ("date", false, Some("Dia, mês e ano. Deixe em branco se ainda está em curso.")),
                "descricao" => ("textarea", false, None),
                _ => ("text", true, None),
            };
            let options = if input == "select" {
                let mut options = vec![("", "Escolha…", value.is_empty())];
                options.extend(Degree::all().map(|d| (d.code(), d.description(), d.code() == value)));
                options
            } else {
                Vec::new()
            };
            FieldView {
                name,
                label: section.label(name),
                input,
                value,
                required,
                hint,
                error: errors.and_then(|e| e.get(name)),
                options,
            }
        })
        .collect();
    FormView { action, hidden: vec![("csrf_token", token)], fields, submit }
}

/// One stored entry as the list shows it.
#[derive(Debug)]
pub struct ItemView {
    /// What and where, e.g. `Enfermeira — Hospital X` or `Enfermagem
    /// (Graduação) — UFRN`.
    pub heading: String,
    /// The period, e.g. `01/02/2019 a 31/12/2020`.
    pub period: String,
    /// Municipality.
    pub municipio: String,
    /// Description (may be empty).
    pub descricao: String,
    /// Whether it came from CNES.
    pub from_cnes: bool,
    /// The edit form's path.
    pub edit: String,
    /// The delete confirmation's path.
    pub delete: String,
}

/// A `YYYY-MM-DD` date as Brazilians read it (`DD/MM/AAAA`).
fn brazilian(date: &str) -> String {
    match (date.get(0..4), date.get(5..7), date.get(8..10)) {
        (Some(y), Some(m), Some(d)) if date.len() == 10 => format!("{d}/{m}/{y}"),
        _ => date.to_owned(),
    }
}

impl ItemView {
    /// `entry` of `section`.
    pub fn of(section: &Section, entry: &OwnEntry) -> Self {
        let what = match entry.grau {
            Some(grau) => format!("{} ({})", entry.subject, grau.description()),
            None => entry.subject.clone(),
        };
        let period = match (entry.data_inicio.as_deref(), entry.data_fim.as_deref()) {
            (Some(start), Some(end)) => format!("{} a {}", brazilian(start), brazilian(end)),
            (Some(start), None) => format!("Desde {}", brazilian(start)),
            (None, Some(end)) => format!("Até {}", brazilian(end)),
            (None, None) => "Período não informado".to_owned(),
        };
        Self {
            heading: format!("{what} — {}", entry.place),
            period,
            municipio: entry.municipio.clone(),
            descricao: entry.descricao.clone(),
            from_cnes: entry.from_cnes,
            edit: section.entry_path(entry.id.0),
            delete: section.delete_path(entry.id.0),
        }
    }
}

/// The list of a kind with its add form (`templates/account/entries.html`).
#[derive(Debug, Template)]
#[template(path = "account/entries.html")]
pub struct EntriesPage<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The account frame.
    pub frame: Frame,
    /// Why the add form was refused, if it was.
    pub message: Option<&'a str>,
    /// What just happened (added, saved, deleted), if anything.
    pub notice: Option<String>,
    /// How the kind is named.
    pub section: &'a Section,
    /// The stored entries.
    pub items: Vec<ItemView>,
    /// The add form.
    pub form: FormView<'a>,
}

/// The edit form of one entry (`templates/account/entry.html`).
#[derive(Debug, Template)]
#[template(path = "account/entry.html")]
pub struct EntryPage<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: String,
    /// The account frame.
    pub frame: Frame,
    /// Why the form was refused, if it was.
    pub message: Option<&'a str>,
    /// How the kind is named.
    pub section: &'a Section,
    /// Whether the entry came from CNES.
    pub from_cnes: bool,
    /// The form.
    pub form: FormView<'a>,
    /// The delete confirmation's path.
    pub delete: String,
}

/// The confirmation before a delete (`templates/account/entry_delete.html`).
#[derive(Debug, Template)]
#[template(path = "account/entry_delete.html")]
pub struct DeletePage<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: String,
    /// The account frame.
    pub frame: Frame,
    /// How the kind is named.
    pub section: &'a Section,
    /// The entry to delete.
    pub item: ItemView,
    /// Where the form posts.
    pub action: String,
    /// The anti-forgery token.
    pub hidden: Vec<(&'static str, &'a str)>,
}

/// The message over a refused form.
pub const CHECK_THE_FIELDS: &str = "Não foi possível salvar: confira os campos indicados abaixo.";

/// The list page of `section`.
pub fn entries_page<'a>(
    section: &'a Section,
    items: &[OwnEntry],
    notice: Option<String>,
    form: FormView<'a>,
    refused: bool,
) -> EntriesPage<'a> {
    EntriesPage {
        site: &PROVIDER,
        title: section.title,
        frame: Frame::account(section.path),
        message: refused.then_some(CHECK_THE_FIELDS),
        notice,
        section,
        items: items.iter().map(|e| ItemView::of(section, e)).collect(),
        form,
    }
}

/// The edit page of an entry of `section`.
pub fn entry_page<'a>(
    section: &'a Section,
    id: i64,
    from_cnes: bool,
    form: FormView<'a>,
    refused: bool,
) -> EntryPage<'a> {
    EntryPage {
        site: &PROVIDER,
        title: format!("Editar {}", section.word),
        frame: Frame::account(section.path),
        message: refused.then_some(CHECK_THE_FIELDS),
        section,
        from_cnes,
        form,
        delete: section.delete_path(id),
    }
}

/// The delete confirmation of `entry` of `section`.
pub fn delete_page<'a>(section: &'a Section, entry: &OwnEntry, token: &'a str) -> DeletePage<'a> {
    DeletePage {
        site: &PROVIDER,
        title: format!("Excluir {}", section.word),
        frame: Frame::account(section.path),
        section,
        item: ItemView::of(section, entry),
        action: section.delete_path(entry.id.0),
        hidden: vec![("csrf_token", token)],
    }
}

#[cfg(test)]
mod tests;
