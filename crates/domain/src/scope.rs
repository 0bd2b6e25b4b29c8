//! The scope catalogue of the profile service: names, which are always
//! granted, the shape of each scope's answer, where its data comes from and
//! how long upstream data is cached.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// One scope of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// `name` and `avatar` (always granted).
    DadosPublicos,
    /// `cpf` (always granted).
    Cpf,
    /// `email` (always granted).
    Email,
    /// Tax-authority registration data (object).
    ReceitaFederal,
    /// Health-establishment registry bonds (`{"vinculos": [...]}`).
    Cnes,
    /// Professional experience (list).
    ExperienciaProfissional,
    /// Academic degrees (list).
    FormacaoAcademica,
    /// Community-of-practice courses (`{"total", "data": [...]}`).
    CursosCdp,
}

/// Where a scope's data comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeSource {
    /// The service's own database, always fresh.
    OwnDatabase,
    /// An upstream registry, cached server-side.
    Upstream,
}

/// The JSON shape of a scope's answer, as the attribute map needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeShape {
    /// Plain fields at the top level of the payload.
    TopLevelFields,
    /// One object under the scope's key (dot notation applies).
    Object,
    /// A list, or an object that carries a list (dot notation does not apply).
    ListBearing,
}

/// A scope name that is not in the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown scope {0:?}")]
pub struct UnknownScope(pub String);

const DAY: u64 = 24 * 60 * 60;

impl Scope {
    /// Every scope, in the contract's order.
    pub const ALL: [Scope; 8] = [
        Scope::DadosPublicos,
        Scope::Cpf,
        Scope::Email,
        Scope::ReceitaFederal,
        Scope::Cnes,
        Scope::ExperienciaProfissional,
        Scope::FormacaoAcademica,
        Scope::CursosCdp,
    ];

    /// The scopes every grant carries.
    pub const REQUIRED: [Scope; 3] = [Scope::DadosPublicos, Scope::Cpf, Scope::Email];

    /// The scope's name as the contract writes it.
    pub fn name(self) -> &'static str {
        match self {
            Scope::DadosPublicos => "dados_publicos",
            Scope::Cpf => "cpf",
            Scope::Email => "email",
            Scope::ReceitaFederal => "receita_federal",
            Scope::Cnes => "cnes",
            Scope::ExperienciaProfissional => "experiencia_profissional",
            Scope::FormacaoAcademica => "formacao_academica",
            Scope::CursosCdp => "cursos_cdp",
        }
    }

    /// Whether every grant carries this scope.
    pub fn is_required(self) -> bool {
        Self::REQUIRED.contains(&self)
    }

    /// The shape of this scope's answer.
    pub fn shape(self) -> ScopeShape {
        match self {
            Scope::DadosPublicos | Scope::Cpf | Scope::Email => ScopeShape::TopLevelFields,
            Scope::ReceitaFederal => ScopeShape::Object,
            Scope::Cnes | Scope::ExperienciaProfissional | Scope::FormacaoAcademica | Scope::CursosCdp => {
                ScopeShape::ListBearing
            }
        }
    }

    /// Where this scope's data comes from.
    pub fn source(self) -> ScopeSource {
        match self {
            Scope::ReceitaFederal | Scope::Cnes | Scope::CursosCdp => ScopeSource::Upstream,
            _ => ScopeSource::OwnDatabase,
        }
    }

    /// The contract's server-side cache duration in seconds (`None`: not
    /// cached, always fresh).
    pub fn default_cache_secs(self) -> Option<u64> {
        match self {
            Scope::ReceitaFederal => Some(5 * 365 * DAY),
            Scope::Cnes => Some(7 * DAY),
            Scope::CursosCdp => Some(DAY),
            _ => None,
        }
    }

    /// Plain-language description for the consent page (Portuguese, as the
    /// users of the service read it).
    pub fn description(self) -> &'static str {
        match self {
            Scope::DadosPublicos => "Seu nome e sua foto de perfil",
            Scope::Cpf => "Seu CPF",
            Scope::Email => "Seu endereço de e-mail",
            Scope::ReceitaFederal => {
                "Seus dados cadastrais na Receita Federal (nome, nascimento, sexo, mãe, município, UF)"
            }
            Scope::Cnes => "Seus vínculos profissionais no CNES",
            Scope::ExperienciaProfissional => "Sua experiência profissional",
            Scope::FormacaoAcademica => "Sua formação acadêmica",
            Scope::CursosCdp => "Seus cursos na Comunidade de Práticas",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Scope {
    type Err = UnknownScope;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Scope::ALL.into_iter().find(|scope| scope.name() == s).ok_or_else(|| UnknownScope(s.to_owned()))
    }
}

/// The OpenID Connect scope: a protocol scope beside the profile scopes.
/// It asks for an ID token and lets the access token read
/// `/oauth/userinfo/`; it carries no profile data of its own, so it is
/// not a [`Scope`] of the catalogue (no shape, source or cache) and no
/// application enables it: every application may ask for it.
pub const OPENID: &str = "openid";

/// A set of scopes (a tiny bit set; order is always the catalogue's): the
/// profile scopes of the catalogue and, apart from them, whether the
/// protocol scope [`OPENID`] is in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ScopeSet(u16);

/// The bit of [`OPENID`], above the catalogue's eight.
const OPENID_BIT: u16 = 1 << 8;

impl ScopeSet {
    /// No scope.
    pub const fn empty() -> Self {
        Self(0)
    }

    /// The three required scopes.
    pub fn required() -> Self {
        Scope::REQUIRED.into_iter().collect()
    }

    /// Every scope.
    pub fn all() -> Self {
        Scope::ALL.into_iter().collect()
    }

    fn bit(scope: Scope) -> u16 {
        1 << (scope as u16)
    }

    /// The set of the protocol scope [`OPENID`] alone.
    pub const fn openid() -> Self {
        Self(OPENID_BIT)
    }

    /// Whether the protocol scope [`OPENID`] is in the set.
    pub fn has_openid(self) -> bool {
        self.0 & OPENID_BIT != 0
    }

    /// The same set with [`OPENID`] in (`true`) or out (`false`).
    pub fn with_openid(self, openid: bool) -> Self {
        if openid {
            Self(self.0 | OPENID_BIT)
        } else {
            Self(self.0 & !OPENID_BIT)
        }
    }

    /// The profile scopes of the set (without [`OPENID`]).
    pub fn profile_scopes(self) -> Self {
        self.with_openid(false)
    }

    /// Adds a scope.
    pub fn insert(&mut self, scope: Scope) {
        self.0 |= Self::bit(scope);
    }

    /// Whether `scope` is in the set.
    pub fn contains(self, scope: Scope) -> bool {
        self.0 & Self::bit(scope) != 0
    }

    /// Scopes in both sets.
    pub fn intersection(self, other: ScopeSet) -> ScopeSet {
        ScopeSet(self.0 & other.0)
    }

    /// Scopes in either set.
    pub fn union(self, other: ScopeSet) -> ScopeSet {
        ScopeSet(self.0 | other.0)
    }

    /// Whether every scope of `self` is in `other`.
    pub fn is_subset(self, other: ScopeSet) -> bool {
        self.0 & !other.0 == 0
    }

    /// The profile scopes, in catalogue order ([`OPENID`] is not one of
    /// them: see [`has_openid`](Self::has_openid)).
    pub fn iter(self) -> impl Iterator<Item = Scope> {
        Scope::ALL.into_iter().filter(move |s| self.contains(*s))
    }

    /// Parses a space-separated list strictly: any name that is neither
    /// in the catalogue nor [`OPENID`] is an error.
    pub fn parse_strict(text: &str) -> Result<Self, UnknownScope> {
        let mut set = Self::empty();
        for name in text.split_ascii_whitespace() {
            match name {
                OPENID => set = set.with_openid(true),
                other => set.insert(other.parse()?),
            }
        }
        Ok(set)
    }

    /// Parses a space-separated list, ignoring names that are neither in
    /// the catalogue nor [`OPENID`] (what a narrowing request does: it can
    /// only take away).
    pub fn parse_lenient(text: &str) -> Self {
        let words = text.split_ascii_whitespace();
        let openid = words.clone().any(|w| w == OPENID);
        words.filter_map(|s| s.parse().ok()).collect::<Self>().with_openid(openid)
    }

    /// The space-separated form (OAuth2's `scope` parameter and claim):
    /// [`OPENID`] first when it is in, then the profile scopes in
    /// catalogue order.
    pub fn to_scope_string(self) -> String {
        let openid = self.has_openid().then_some(OPENID);
        openid.into_iter().chain(self.iter().map(Scope::name)).collect::<Vec<_>>().join(" ")
    }
}

impl FromIterator<Scope> for ScopeSet {
    fn from_iter<I: IntoIterator<Item = Scope>>(iter: I) -> Self {
        let mut set = ScopeSet::empty();
        for s in iter {
            set.insert(s);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for s in Scope::ALL {
            assert_eq!(s.name().parse::<Scope>(), Ok(s));
        }
        assert_eq!(
            "openid".parse::<Scope>(),
            Err(UnknownScope("openid".into())),
            "a protocol scope, not a profile one"
        );
        assert!("CPF".parse::<Scope>().is_err(), "names are case-sensitive");
    }

    #[test]
    fn catalogue_matches_the_contract() {
        let required: Vec<_> = Scope::ALL.into_iter().filter(|s| s.is_required()).map(Scope::name).collect();
        assert_eq!(required, ["dados_publicos", "cpf", "email"]);
        assert_eq!(Scope::ReceitaFederal.shape(), ScopeShape::Object);
        for s in [Scope::Cnes, Scope::ExperienciaProfissional, Scope::FormacaoAcademica, Scope::CursosCdp] {
            assert_eq!(s.shape(), ScopeShape::ListBearing, "{s}");
        }
        assert_eq!(Scope::ReceitaFederal.default_cache_secs(), Some(157_680_000));
        assert_eq!(Scope::Cnes.default_cache_secs(), Some(604_800));
        assert_eq!(Scope::CursosCdp.default_cache_secs(), Some(86_400));
        for s in
            [Scope::DadosPublicos, Scope::Cpf, Scope::Email, Scope::ExperienciaProfissional, Scope::FormacaoAcademica]
        {
            assert_eq!(s.default_cache_secs(), None, "{s}");
            assert_eq!(s.source(), ScopeSource::OwnDatabase, "{s}");
        }
    }

    #[test]
    fn sets_parse_intersect_and_print_in_catalogue_order() {
        let set = ScopeSet::parse_strict("cursos_cdp cpf  receita_federal").expect("known");
        assert_eq!(set.to_scope_string(), "cpf receita_federal cursos_cdp");
        assert!(ScopeSet::parse_strict("cpf nope").is_err());
        assert_eq!(ScopeSet::parse_lenient("cpf nope email").to_scope_string(), "cpf email");
        let enabled = ScopeSet::parse_strict("cpf cnes").expect("known");
        assert_eq!(set.intersection(enabled).to_scope_string(), "cpf");
        assert!(ScopeSet::required().is_subset(ScopeSet::all()));
        assert_eq!(ScopeSet::parse_strict("").expect("empty"), ScopeSet::empty());
    }

    #[test]
    fn openid_is_kept_apart_from_the_profile_scopes() {
        let set = ScopeSet::parse_strict("cpf openid cnes").expect("known");
        assert!(set.has_openid());
        assert_eq!(set.iter().collect::<Vec<_>>(), [Scope::Cpf, Scope::Cnes], "iter yields profile scopes only");
        assert_eq!(set.to_scope_string(), "openid cpf cnes", "openid comes first");
        assert_eq!(set.profile_scopes().to_scope_string(), "cpf cnes");
        assert_eq!(ScopeSet::parse_lenient("x openid"), ScopeSet::openid());
        assert!(!ScopeSet::all().has_openid(), "all() is the profile catalogue");
        assert!(ScopeSet::openid().is_subset(set) && !set.is_subset(set.profile_scopes()));
        assert_eq!(ScopeSet::parse_strict(&set.to_scope_string()), Ok(set));
        assert_eq!(set.with_openid(false).with_openid(true), set);
    }

    // ---- properties: the `scope` a client sends (profile narrowing, refresh) ----

    use proptest::prelude::*;

    /// Scope names, near misses and noise, separated by assorted whitespace.
    fn scope_text() -> impl Strategy<Value = String> {
        let word = prop_oneof![
            prop::sample::select(Scope::ALL.map(Scope::name).to_vec()).prop_map(str::to_owned),
            Just(OPENID.to_owned()),
            Just("CPF".to_owned()),
            Just("cpf,email".to_owned()),
            "\\PC{0,10}",
        ];
        let gap = prop::sample::select(vec![" ", "  ", "\t", "\n", "\u{a0}"]);
        prop::collection::vec((word, gap), 0..8)
            .prop_map(|parts| parts.into_iter().map(|(w, g)| format!("{w}{g}")).collect())
    }

    fn any_set() -> impl Strategy<Value = ScopeSet> {
        (prop::collection::vec(prop::sample::select(Scope::ALL.to_vec()), 0..9), any::<bool>())
            .prop_map(|(v, openid)| v.into_iter().collect::<ScopeSet>().with_openid(openid))
    }

    proptest! {
        #[test]
        fn lenient_parsing_keeps_exactly_the_catalogue_names_among_the_words(text in scope_text()) {
            let parsed = ScopeSet::parse_lenient(&text);
            for scope in Scope::ALL {
                let named = text.split_ascii_whitespace().any(|w| w == scope.name());
                prop_assert_eq!(parsed.contains(scope), named, "{} in {:?}", scope, text);
            }
            prop_assert_eq!(parsed.has_openid(), text.split_ascii_whitespace().any(|w| w == OPENID));
            match ScopeSet::parse_strict(&text) {
                Ok(strict) => prop_assert_eq!(strict, parsed),
                Err(UnknownScope(name)) => prop_assert!(name.parse::<Scope>().is_err()),
            }
        }

        #[test]
        fn sets_round_trip_through_their_scope_string(set in any_set()) {
            prop_assert_eq!(ScopeSet::parse_strict(&set.to_scope_string()), Ok(set));
        }

        #[test]
        fn narrowing_only_takes_away(granted in any_set(), text in scope_text()) {
            let narrowed = granted.intersection(ScopeSet::parse_lenient(&text));
            prop_assert!(narrowed.is_subset(granted));
        }
    }
}
