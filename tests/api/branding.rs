//! The institution's identity (issue 26): the branding settings on every
//! page (home, login, error pages, signed-in pages with the person's name
//! and "Sair") and in mails; the logo served by the service; a neutral
//! identity when nothing is set; wrong settings refused by name.

use credencial_adapters_upstream::testing::SmtpSink;

use crate::account::signed_in_browser;
use crate::helpers::{spawn_app, Browser};
use crate::recovery::{app_mailing_to, ask, mails_to, part, settled, text_part};

/// What Chromium sends when it navigates.
const BROWSER: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

const LOGO: &str =
    r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><rect width="8" height="8" fill="#1b6b3a"/></svg>"##;

/// A logo file in a directory of its own.
fn logo_file() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("credencial-brand-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("logo.svg");
    std::fs::write(&path, LOGO).expect("logo");
    path
}

/// The settings of the test institution.
fn brand(s: &mut credencial::settings::Settings, logo: std::path::PathBuf) {
    let b = &mut s.branding;
    b.service_name = "ID Exemplo".into();
    b.institution_name = Some("Instituto Federal de Exemplo".into());
    b.institution_short_name = Some("IFEX".into());
    b.institution_logo = Some(logo);
    b.primary_colour = credencial_app_actix::branding::Colour::parse("#1b6b3a").expect("colour");
    b.help_url =
        Some(credencial_app_actix::branding::Href::parse("https://www.ifex.example.gov.br/ajuda").expect("href"));
    b.contact_url = Some(credencial_app_actix::branding::Href::parse("mailto:fale@ifex.example.gov.br").expect("href"));
    b.govbr_bar = true;
}

/// Asserts the institution's frame on `page`.
fn assert_branded(page: &str, title: &str) {
    assert!(page.contains(&format!("<title>{title} · ID Exemplo</title>")), "{page}");
    assert!(page.contains("<span class=\"long\">Instituto Federal de Exemplo</span>"), "{page}");
    assert!(page.contains("<span class=\"short\" aria-hidden=\"true\">IFEX</span>"), "{page}");
    assert!(page.contains("<img class=\"logo\" src=\"/marca/logo?v="), "{page}");
    assert!(page.contains("--primary:#1b6b3a"), "the colour");
    assert!(page.contains("<nav class=\"govbr\" aria-label=\"Governo federal\">"), "the gov.br bar");
    assert!(page.contains("<a href=\"/privacidade/\">Aviso de privacidade</a>"), "{page}");
    assert!(page.contains("<a href=\"https://www.ifex.example.gov.br/ajuda\">Ajuda</a>"), "{page}");
    assert!(page.contains("<a href=\"mailto:fale@ifex.example.gov.br\">Fale conosco</a>"), "{page}");
    assert!(!page.contains("Acessibilidade</a>"), "a link not set is not shown");
}

#[tokio::test]
async fn the_institution_appears_on_pages_error_pages_and_its_logo_is_served() {
    let sink = SmtpSink::start().await;
    let app = app_mailing_to(&sink, |s| brand(s, logo_file())).await;
    let mut browser = Browser::new(&app);
    for (path, title) in [("/", "Início"), ("/conta/entrar/", "Entrar"), ("/privacidade/", "Aviso de privacidade")] {
        let page = browser.get(path).await;
        assert_eq!(page.status, 200, "{path}");
        assert_branded(&page.body, title);
        assert!(!page.body.contains("Olá,"), "{path}: no one is signed in");
    }
    let missing =
        app.client.get(format!("{}/conta/x", app.address)).header("accept", BROWSER).send().await.expect("sent");
    assert_eq!(missing.status(), 404);
    assert_branded(&missing.text().await.expect("body"), "Página não encontrada");

    let logo = app.client.get(format!("{}/marca/logo", app.address)).send().await.expect("sent");
    assert_eq!(logo.status(), 200);
    assert_eq!(logo.headers()["content-type"], "image/svg+xml");
    assert!(logo.headers()["content-security-policy"].to_str().expect("ascii").contains("default-src 'none'"));
    assert_eq!(logo.text().await.expect("body"), LOGO);

    // A mail: the service's and the institution's names, the colour.
    ask(&app, "lia").await;
    settled(&app).await;
    let mail = mails_to(&sink, "lia@example.gov.br").pop().expect("a reset mail");
    let text = text_part(&mail);
    assert!(text.contains("sua conta no ID Exemplo"), "{text}");
    let html = part(&mail, "text/html");
    assert!(html.contains("ID Exemplo <span") && html.contains("· Instituto Federal de Exemplo"), "{html}");
    assert!(html.contains("#1b6b3a") && !html.contains("#1351b4"), "{html}");
    assert!(!html.contains("<img"), "no remote image in a mail");
}

#[tokio::test]
async fn a_signed_in_page_greets_the_person_and_offers_sair() {
    let sink = SmtpSink::start().await;
    let app = app_mailing_to(&sink, |s| brand(s, logo_file())).await;
    let mut browser = signed_in_browser(&app, "lia", "senha-da-lia-1").await;
    for path in ["/conta/", "/conta/seguranca/", "/conta/acessos/"] {
        let page = browser.get(path).await;
        assert_eq!(page.status, 200, "{path}");
        assert!(
            page.body.contains(
                "<p class=\"person\"><span>Olá, <strong>Nome lia</strong></span> <a href=\"/conta/sair/\">Sair</a></p>"
            ),
            "{path}: {}",
            page.body
        );
    }
    // The link leads to the logout page, which ends the session.
    let logout = browser.get("/conta/sair/").await;
    assert_eq!(logout.status, 200);
}

#[tokio::test]
async fn unset_the_identity_is_neutral_and_there_is_no_logo() {
    let app = spawn_app().await;
    let page = app.client.get(format!("{}/", app.address)).send().await.expect("sent").text().await.expect("body");
    assert!(page.contains("<title>Início · credencial</title>"), "{page}");
    assert!(!page.contains("<img") && !page.contains("class=\"govbr\""), "{page}");
    assert!(page.contains("<a href=\"/privacidade/\">Aviso de privacidade</a>"), "{page}");
    let logo = app.client.get(format!("{}/marca/logo", app.address)).send().await.expect("sent");
    assert_eq!(logo.status(), 404);
}

#[tokio::test]
async fn wrong_branding_settings_stop_the_start_by_name() {
    use credencial::settings::Settings;
    let dir = std::env::temp_dir().join(format!("credencial-brand-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("credencial.toml");
    let cases = [
        ("primary_colour = \"#ffcc00\"", "SERVICE_PRIMARY_COLOUR"),
        ("primary_colour = \"azul\"", "SERVICE_PRIMARY_COLOUR"),
        ("help_url = \"javascript:alert(1)\"", "SERVICE_HELP_URL"),
        ("institution_logo = \"/nao/existe.svg\"", "SERVICE_INSTITUTION_LOGO"),
        ("institution_logo = \"/etc/hostname\"", "SERVICE_INSTITUTION_LOGO"),
        ("service_name = \"  \"", "SERVICE_SERVICE_NAME"),
    ];
    for (line, name) in cases {
        std::fs::write(&file, line).expect("settings");
        let e = Settings::load(Some(&file)).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains(name), "{line}: {e}");
    }
    std::fs::remove_dir_all(&dir).expect("clean");
}
