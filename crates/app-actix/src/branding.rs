//! The institution's identity on every page and mail: its name, short
//! name, logo, primary colour, footer links and the optional gov.br top
//! bar ([`Branding`], from the `branding` settings), and the request's
//! page context that carries it, with the signed-in person's name, to the
//! page frame (`templates/base.html`).
//!
//! The context is task-local for the request ([`PageContext`], a
//! middleware): an error page rendered by an error type, which has no
//! request at hand, carries the identity as well as a handler's page.
//! Outside a request (unit tests, the CLI) pages get the neutral default.

use std::cell::RefCell;
use std::future::{ready, Ready};
use std::sync::{Arc, LazyLock};

use actix_web::dev::{Service, ServiceRequest, ServiceResponse, Transform};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::HttpResponse;

/// Where the logo is served.
pub const LOGO_PATH: &str = "/marca/logo";

/// The largest logo file accepted (a logo is a few kilobytes; the limit
/// keeps a wrong path from loading a large file into memory).
pub const MAX_LOGO_BYTES: usize = 256 * 1024;

/// Lowest contrast of the primary colour against white: links and the
/// text of buttons are drawn in it on white, and white on it (WCAG AA).
pub const MIN_CONTRAST: f64 = 4.5;

/// A colour as `#rrggbb`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Colour([u8; 3]);

impl Colour {
    /// The default primary colour: the federal design system's blue.
    pub const DEFAULT: Colour = Colour([0x13, 0x51, 0xb4]);

    /// `#rrggbb` (or `#rgb`), refused when it is not one, or when white
    /// text on it (and it on white) would be hard to read.
    pub fn parse(text: &str) -> Result<Self, String> {
        const FORM: &str = "must be a colour written #rrggbb";
        let hex = text.trim().strip_prefix('#').filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit())).ok_or(FORM)?;
        // Each channel's digits: two, or one written twice (#rgb).
        let width = match hex.len() {
            6 => 2,
            3 => 1,
            _ => return Err(FORM.into()),
        };
        let channel = |i: usize| {
            let digits = &hex[i * width..(i + 1) * width];
            u8::from_str_radix(&digits.repeat(3 - width), 16).map_err(|_| FORM.to_owned())
        };
        let colour = Colour([channel(0)?, channel(1)?, channel(2)?]);
        let contrast = colour.contrast_with_white();
        if contrast < MIN_CONTRAST {
            return Err(format!(
                "{text} is too light: white text on it has a contrast of {contrast:.1}:1, and at least {MIN_CONTRAST}:1 is \
                 needed (WCAG AA); choose a darker shade"
            ));
        }
        Ok(colour)
    }

    /// The contrast ratio of this colour against white (WCAG 2).
    pub fn contrast_with_white(&self) -> f64 {
        let channel = |c: u8| {
            let c = f64::from(c) / 255.0;
            if c <= 0.03928 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        let [r, g, b] = self.0;
        let luminance = 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
        1.05 / (luminance + 0.05)
    }

    /// This colour moved towards `other` by `share` (0 to 1).
    fn mixed(self, other: [u8; 3], share: f64) -> Colour {
        let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * share).round() as u8;
        Colour([mix(self.0[0], other[0]), mix(self.0[1], other[1]), mix(self.0[2], other[2])])
    }

    /// The shade for hovered buttons and the footer.
    pub fn dark(self) -> Colour {
        self.mixed([0, 0, 0], 0.4)
    }

    /// The tint behind hovered links and secondary buttons.
    pub fn light(self) -> Colour {
        self.mixed([0xff, 0xff, 0xff], 0.85)
    }
}

impl std::fmt::Display for Colour {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{:02x}{:02x}{:02x}", self.0[0], self.0[1], self.0[2])
    }
}

/// Where a footer link leads: an `https://` address, a `mailto:` address,
/// or a path of this service (`/…`). Anything else (an `http://` or a
/// `javascript:` URL, a bare word, `/\host`, which a browser reads as
/// another site) is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Href(String);

impl Href {
    /// The link `text`, or why it is not one.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let lower = text.to_ascii_lowercase();
        // A browser reads `/\host` as `//host`: another site.
        let path = text.starts_with('/') && !text.starts_with("//") && !text.contains('\\');
        let web = lower.starts_with("https://") && lower.len() > "https://".len();
        let mail = lower.starts_with("mailto:") && text.contains('@');
        if text.chars().any(|c| c.is_whitespace() || c.is_control()) || !(path || web || mail) {
            return Err("must be an https:// address, a mailto: address or a path starting with /".into());
        }
        Ok(Self(text.to_owned()))
    }

    /// The link as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The logo: a file the service serves at [`LOGO_PATH`].
#[derive(Debug, Clone)]
pub struct Logo {
    /// The file's bytes.
    bytes: Arc<[u8]>,
    /// Its media type (from its extension).
    content_type: &'static str,
}

impl Logo {
    /// The logo read from `path` (an `.svg`, `.png`, `.jpg` or `.webp`
    /// file of at most [`MAX_LOGO_BYTES`]), or why it cannot be used.
    pub fn from_file(path: &std::path::Path) -> Result<Self, String> {
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        let content_type = match extension.as_str() {
            "svg" => "image/svg+xml",
            "png" => "image/png",
            "jpg" | "jpeg" => "image/jpeg",
            "webp" => "image/webp",
            _ => return Err(format!("{}: the logo must be an .svg, .png, .jpg or .webp file", path.display())),
        };
        use std::io::Read;
        let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        // Never more than the limit in memory, whatever the file's size.
        let mut bytes = Vec::new();
        file.take(MAX_LOGO_BYTES as u64 + 1).read_to_end(&mut bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        if bytes.len() > MAX_LOGO_BYTES {
            return Err(format!("{}: a logo may have at most {MAX_LOGO_BYTES} bytes", path.display()));
        }
        Ok(Self { bytes: bytes.into(), content_type })
    }

    /// The demo institution's logo (compiled in).
    pub fn demo() -> Self {
        Self { bytes: DEMO_LOGO.as_bytes().into(), content_type: "image/svg+xml" }
    }

    /// The answer of [`LOGO_PATH`]: the file, cacheable for a day, and an
    /// SVG can run nothing (its own CSP) nor be sniffed as anything else.
    fn answer(&self) -> HttpResponse {
        HttpResponse::Ok()
            .insert_header((header::CONTENT_TYPE, HeaderValue::from_static(self.content_type)))
            .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=86400")))
            .insert_header((header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")))
            .insert_header((
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; sandbox"),
            ))
            .body(self.bytes.to_vec())
    }
}

/// The demo institution's logo: an emblem in its colour.
const DEMO_LOGO: &str = include_str!("../templates/public/demo-logo.svg");

/// The institution's identity (see the module's documentation).
#[derive(Debug, Clone)]
pub struct Branding {
    /// The service's name as people know it, in titles and in sentences
    /// ("a sua conta no …"; default "credencial").
    pub service_name: String,
    /// The institution's full name, in the header and the footer (empty:
    /// none shown).
    pub institution_name: String,
    /// Its short name (an acronym), shown instead of the full name on
    /// narrow screens (empty: the full name).
    pub institution_short_name: String,
    /// The logo, served at [`LOGO_PATH`] and shown in the header.
    pub logo: Option<Logo>,
    /// The primary colour: header rule, links, buttons.
    pub primary: Colour,
    /// The footer's privacy notice link (default: this service's notice).
    pub privacy: Href,
    /// The footer's help link.
    pub help: Option<Href>,
    /// The footer's accessibility statement link.
    pub accessibility: Option<Href>,
    /// The footer's contact link (an address or a `mailto:`).
    pub contact: Option<Href>,
    /// Whether the pages open with the federal government's gov.br bar.
    pub govbr_bar: bool,
}

impl Default for Branding {
    /// The neutral identity: the service's own name and colour, no
    /// institution, the privacy notice only.
    fn default() -> Self {
        Self {
            service_name: "credencial".into(),
            institution_name: String::new(),
            institution_short_name: String::new(),
            logo: None,
            primary: Colour::DEFAULT,
            privacy: Href(crate::public_pages::PRIVACY_PATH.into()),
            help: None,
            accessibility: None,
            contact: None,
            govbr_bar: false,
        }
    }
}

impl Branding {
    /// The demo's institution: a plausible federal institute (fictional),
    /// with its logo, colour, footer links and the gov.br bar.
    pub fn demo() -> Self {
        Self {
            service_name: "ID Sabiá".into(),
            institution_name: "Instituto Federal do Vale do Sabiá".into(),
            institution_short_name: "IFVS".into(),
            logo: Some(Logo::demo()),
            primary: Colour([0x1b, 0x6b, 0x3a]),
            privacy: Href(crate::public_pages::PRIVACY_PATH.into()),
            help: Some(Href(crate::public_pages::HOME_PATH.into())),
            accessibility: None,
            contact: Some(Href("mailto:atendimento@ifvs.example.gov.br".into())),
            govbr_bar: true,
        }
    }

    /// The name the header and the footer give the institution: its full
    /// name, or the service's when none is set.
    pub fn institution(&self) -> &str {
        if self.institution_name.is_empty() {
            &self.service_name
        } else {
            &self.institution_name
        }
    }

    /// The short name for narrow screens (the full one when none is set).
    pub fn short_name(&self) -> &str {
        if self.institution_short_name.is_empty() {
            self.institution()
        } else {
            &self.institution_short_name
        }
    }

    /// What follows the service's name in a mail's header and signature:
    /// the institution's name, or "Identidade digital" without one.
    pub fn institution_line(&self) -> &str {
        if self.institution_name.is_empty() {
            "Identidade digital"
        } else {
            &self.institution_name
        }
    }

    /// The address the pages load the logo from, when there is one:
    /// [`LOGO_PATH`] with the first bytes of the file's SHA-256, so that a
    /// new logo shows at once although browsers keep the old one for a day.
    pub fn logo_src(&self) -> Option<String> {
        use sha2::{Digest, Sha256};
        let logo = self.logo.as_ref()?;
        let version: String = Sha256::digest(&logo.bytes).iter().take(6).map(|b| format!("{b:02x}")).collect();
        Some(format!("{LOGO_PATH}?v={version}"))
    }

    /// The footer's links, in order: label and address.
    pub fn links(&self) -> Vec<(&'static str, &str)> {
        let mut links = vec![("Aviso de privacidade", self.privacy.as_str())];
        for (label, href) in
            [("Ajuda", &self.help), ("Acessibilidade", &self.accessibility), ("Fale conosco", &self.contact)]
        {
            if let Some(href) = href {
                links.push((label, href.as_str()));
            }
        }
        links
    }

    /// The stylesheet's colour variables for this identity.
    pub fn colour_rules(&self) -> String {
        format!(
            ":root{{--primary:{};--primary-dark:{};--primary-light:{}}}",
            self.primary,
            self.primary.dark(),
            self.primary.light()
        )
    }

    /// The logo's resource (404 without a logo).
    pub fn logo_resource(self: &Arc<Self>) -> actix_web::Resource {
        let branding = Arc::clone(self);
        crate::routes::resource(LOGO_PATH, "GET").route(crate::routes::get().to(move || {
            let branding = Arc::clone(&branding);
            async move {
                match &branding.logo {
                    Some(logo) => logo.answer(),
                    None => HttpResponse::new(StatusCode::NOT_FOUND),
                }
            }
        }))
    }
}

/// The neutral identity, for pages rendered outside a request.
static NEUTRAL: LazyLock<Arc<Branding>> = LazyLock::new(|| Arc::new(Branding::default()));

/// What the frame of a page needs from its request.
pub struct PageScope {
    /// The institution's identity.
    branding: Arc<Branding>,
    /// The signed-in person's name, once a signed-in page has read the
    /// session.
    person: RefCell<Option<String>>,
}

tokio::task_local! {
    /// The page context of the request being answered.
    static PAGE: PageScope;
}

/// The identity of the request's pages (the neutral one outside a request).
pub fn current() -> Arc<Branding> {
    PAGE.try_with(|page| Arc::clone(&page.branding)).unwrap_or_else(|_| Arc::clone(&NEUTRAL))
}

/// Names the signed-in person on the request's pages (the header's
/// "Olá, … · Sair"); an empty name names no one.
pub fn set_person(name: &str) {
    let name = name.trim();
    if name.is_empty() {
        return;
    }
    let _ = PAGE.try_with(|page| *page.person.borrow_mut() = Some(name.to_owned()));
}

/// The signed-in person's name, when a signed-in page set it.
pub fn person() -> Option<String> {
    PAGE.try_with(|page| page.person.borrow().clone()).ok().flatten()
}

/// The middleware that gives every request its page context.
#[derive(Debug, Clone)]
pub struct PageContext(pub Arc<Branding>);

impl<S, B> Transform<S, ServiceRequest> for PageContext
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
{
    type Response = ServiceResponse<B>;
    type Error = actix_web::Error;
    type Transform = PageContextService<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        ready(Ok(PageContextService { service, branding: Arc::clone(&self.0) }))
    }
}

/// The service [`PageContext`] wraps around the application.
pub struct PageContextService<S> {
    service: S,
    branding: Arc<Branding>,
}

impl<S, B> Service<ServiceRequest> for PageContextService<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
{
    type Response = ServiceResponse<B>;
    type Error = actix_web::Error;
    type Future = tokio::task::futures::TaskLocalFuture<PageScope, S::Future>;

    actix_web::dev::forward_ready!(service);

    /// The inner service's `call` runs before the scope is entered: the
    /// handlers (and `HtmlErrors`) render when their future is polled,
    /// inside it; a middleware placed inside this one must not render a
    /// page in its own `call`.
    fn call(&self, request: ServiceRequest) -> Self::Future {
        let scope = PageScope { branding: Arc::clone(&self.branding), person: RefCell::new(None) };
        PAGE.scope(scope, self.service.call(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_colour_is_read_as_hex_and_refused_when_white_on_it_is_hard_to_read() {
        assert_eq!(Colour::parse("#1351B4").expect("accepted").to_string(), "#1351b4");
        assert_eq!(Colour::parse("#036").expect("accepted").to_string(), "#003366");
        for wrong in ["1351b4", "#12345", "#gggggg", "", "blue"] {
            assert!(Colour::parse(wrong).expect_err("refused").contains("#rrggbb"), "{wrong}");
        }
        let light = Colour::parse("#ffcc00").expect_err("refused");
        assert!(light.contains("too light") && light.contains("4.5"), "{light}");
        assert!(Colour::DEFAULT.contrast_with_white() >= MIN_CONTRAST);
        assert!(Branding::demo().primary.contrast_with_white() >= MIN_CONTRAST);
    }

    #[test]
    fn the_shades_stay_readable_and_the_rules_name_all_three() {
        let c = Colour::DEFAULT;
        assert!(c.dark().contrast_with_white() > c.contrast_with_white());
        assert!(c.light().contrast_with_white() < 1.5, "a tint behind dark text");
        let rules = Branding::default().colour_rules();
        assert_eq!(
            rules,
            format!(":root{{--primary:#1351b4;--primary-dark:{};--primary-light:{}}}", c.dark(), c.light())
        );
    }

    #[test]
    fn the_logo_address_changes_with_the_file() {
        let demo = Branding::demo().logo_src().expect("a logo");
        let other = Branding {
            logo: Some(Logo { bytes: b"<svg/>".to_vec().into(), content_type: "image/svg+xml" }),
            ..Branding::demo()
        };
        assert!(demo.starts_with("/marca/logo?v="), "{demo}");
        assert_eq!(demo.len(), "/marca/logo?v=".len() + 12);
        assert_ne!(Some(demo.clone()), other.logo_src());
        assert_eq!(Some(demo), Branding::demo().logo_src(), "the same file, the same address");
        assert_eq!(Branding::default().logo_src(), None, "no logo, nothing to load");
    }

    #[test]
    fn a_link_is_an_address_a_mail_or_a_path_and_nothing_that_runs() {
        for good in ["https://www.example.gov.br/ajuda", "/privacidade/", "mailto:ouvidoria@example.gov.br"] {
            assert_eq!(Href::parse(good).expect("accepted").as_str(), good);
        }
        for bad in [
            "javascript:alert(1)",
            "//evil.example",
            "/\\evil.example",
            "http://www.example.gov.br/ajuda",
            "ajuda",
            "https://",
            "mailto:ninguem",
            "/a b",
            "data:text/html,x",
        ] {
            assert!(Href::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_footer_lists_the_privacy_notice_first_and_only_the_links_set() {
        let neutral = Branding::default();
        assert_eq!(neutral.links(), vec![("Aviso de privacidade", "/privacidade/")]);
        assert_eq!(neutral.institution(), "credencial", "no institution: the service's name");
        let demo = Branding::demo();
        let labels: Vec<_> = demo.links().iter().map(|(label, _)| *label).collect();
        assert_eq!(labels, ["Aviso de privacidade", "Ajuda", "Fale conosco"]);
        assert_eq!(demo.short_name(), "IFVS");
    }

    #[test]
    fn a_logo_must_be_an_image_file_of_modest_size() {
        let dir = std::env::temp_dir().join(format!("credencial-logo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("accepted");
        let svg = dir.join("logo.svg");
        std::fs::write(&svg, DEMO_LOGO).expect("accepted");
        assert_eq!(Logo::from_file(&svg).expect("accepted").content_type, "image/svg+xml");
        let text = dir.join("logo.txt");
        std::fs::write(&text, "x").expect("accepted");
        assert!(Logo::from_file(&text).expect_err("refused").contains(".svg, .png"));
        let big = dir.join("big.png");
        std::fs::write(&big, vec![0_u8; MAX_LOGO_BYTES + 1]).expect("accepted");
        assert!(Logo::from_file(&big).expect_err("refused").contains("at most"));
        assert!(Logo::from_file(&dir.join("missing.png")).is_err());
        std::fs::remove_dir_all(&dir).expect("accepted");
    }

    #[tokio::test]
    async fn the_context_carries_the_identity_and_the_person_only_inside_its_request() {
        assert_eq!(current().service_name, "credencial");
        set_person("Ana");
        assert_eq!(person(), None, "no request, no person");
        let scope = PageScope { branding: Arc::new(Branding::demo()), person: RefCell::new(None) };
        PAGE.scope(scope, async {
            assert_eq!(current().service_name, "ID Sabiá");
            assert_eq!(person(), None);
            set_person("  ");
            assert_eq!(person(), None, "an empty name names no one");
            set_person(" Ana ");
            assert_eq!(person().as_deref(), Some("Ana"));
        })
        .await;
    }
}
