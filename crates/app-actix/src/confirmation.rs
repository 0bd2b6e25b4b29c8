//! The step before a destructive or privileged action of Minha conta and
//! the administration panel: the action's form posts once, and, without
//! the confirmation, the answer is a page that says what will happen and
//! posts the same fields back with it (no script needed). A post without
//! it changes nothing.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;

use crate::form::FormFields;
use crate::html::{self, Frame, Site, PROVIDER};

/// The field the confirmation page adds to the form it posts back.
pub const FIELD: &str = "confirmado";

/// Its value.
const YES: &str = "sim";

/// What the confirmation page asks.
#[derive(Debug)]
pub struct Ask<'a> {
    /// The question, the page's heading ("Revogar o acesso de …?").
    pub question: String,
    /// What will happen, in a sentence or two.
    pub consequence: String,
    /// The button that goes ahead ("Revogar").
    pub button: &'a str,
    /// Where "Cancelar" leads (the page of the action's form).
    pub back: &'a str,
    /// The area's frame.
    pub frame: Frame,
}

#[derive(Template)]
#[template(path = "confirm_action.html")]
struct ConfirmActionPage<'a> {
    site: &'static Site,
    title: &'a str,
    frame: Frame,
    consequence: &'a str,
    action: &'a str,
    carried: Vec<(&'a str, &'a str)>,
    button: &'a str,
    back: &'a str,
    field: &'static str,
    yes: &'static str,
}

/// Whether the post carries the confirmation.
pub fn given(fields: &FormFields) -> bool {
    matches!(fields.get(FIELD), Ok(Some(YES)))
}

/// The confirmation page for `ask`: every posted field (the anti-forgery
/// token included) carried back to the request's path with the
/// confirmation. The fields are written into the page: a form that posts
/// a secret (a password) must not ask through this step.
pub fn page(req: &HttpRequest, fields: &FormFields, ask: Ask<'_>) -> HttpResponse {
    let carried = fields.pairs().filter(|(name, _)| *name != FIELD).collect();
    let page = ConfirmActionPage {
        site: &PROVIDER,
        title: &ask.question,
        frame: ask.frame,
        consequence: &ask.consequence,
        action: req.path(),
        carried,
        button: ask.button,
        back: ask.back,
        field: FIELD,
        yes: YES,
    };
    html::html(html::response(StatusCode::OK), &page)
}

/// `None` when the post carries the confirmation; otherwise the page that
/// asks for it (built by `ask` only then).
pub fn required<'a>(req: &HttpRequest, fields: &FormFields, ask: impl FnOnce() -> Ask<'a>) -> Option<HttpResponse> {
    (!given(fields)).then(|| page(req, fields, ask()))
}
