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

/// The fixed words of an action's confirmation: the question and the
/// button, with `{}` where the account or application is named, and what
/// will happen.
#[derive(Debug, Clone, Copy)]
pub struct Words {
    /// The question, `{}` standing for the name.
    pub question: &'static str,
    /// What will happen.
    pub consequence: &'static str,
    /// The button that goes ahead.
    pub button: &'static str,
}

impl Words {
    /// What the page asks about `name`, with "Cancelar" back to `back` in
    /// the area's `frame`.
    pub fn about<'a>(&self, name: &str, back: &'a str, frame: Frame) -> Ask<'a> {
        Ask {
            question: self.question.replace("{}", name),
            consequence: self.consequence.to_owned(),
            button: self.button,
            back,
            frame,
        }
    }
}
