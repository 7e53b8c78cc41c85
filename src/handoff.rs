//! The hand-off recipes measured as scenarios (`docs/HANDOFF.md`): which recipes exist (the
//! data of `matrices/handoff/recipes.toml`), their steps as the tables describe them, and the
//! exact bytes a publish recipe writes.
//!
//! A recipe is a multi-step routine every session probe implements the same way
//! (`probes/shared/session.mjs` for Node, Bun and Deno; `probes/PROTOCOL.md`, protocol 2).
//! Nothing here says what a recipe should achieve: the counts come from the file system and
//! from what the probes read ([`crate::verdict::publish`]).

use std::fmt;
use std::sync::LazyLock;

use serde::Deserialize;

use crate::domain::Scenario;
use crate::matrix::{Creates, SourceKind, Variant};

/// The recipe data, `matrices/handoff/recipes.toml`, built into the binary.
const RECIPES_TOML: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/matrices/handoff/recipes.toml"));

/// How a done-marker consumer decides that the data file is complete (`params.rule` of
/// [`CONSUMER`] in `probes/shared/session.mjs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConsumerRule {
    /// It waits for the manifest `<name>.done`.
    #[default]
    Marker,
    /// It takes the file once its size has not changed for a while.
    SizeStable,
    /// It takes the file once its mtime has not changed for a while.
    MtimeStable,
}

impl ConsumerRule {
    /// The spelling of `params.rule` in the protocol.
    pub fn as_str(self) -> &'static str {
        match self {
            ConsumerRule::Marker => "marker",
            ConsumerRule::SizeStable => "size-stable",
            ConsumerRule::MtimeStable => "mtime-stable",
        }
    }
}

/// Where a publish writer puts its temp file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TempPlace {
    /// Wherever the recipe puts it itself (beside the final name).
    #[default]
    Beside,
    /// In a folder of the harness's own on another file system than the scratch folder's
    /// (`params.temp` names the file); the recipe is `unsupported` where there is none.
    OtherVolume,
}

/// What a lease recipe's lock is: the stale lease the harness leaves behind is of this kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockKind {
    /// A file holding the lease record (JSON: `ownerId`, `pid`, `acquiredAt`, `expiresAt`, …).
    #[default]
    File,
    /// A directory, holding the lease record in its file `owner`.
    Dir,
}

/// One recipe of a hand-off scenario, as `matrices/handoff/recipes.toml` gives it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// The recipe's name in the protocol and in `results.json` (`publish.temp-rename`).
    pub id: String,
    /// The scenario it belongs to.
    pub scenario: Scenario,
    /// Its steps, as the tables show them.
    pub steps: String,
    /// The usual wrong way, measured beside the right one.
    #[serde(default)]
    pub anti_pattern: bool,
    /// Done-marker recipes: the consumer's rule.
    #[serde(default)]
    pub consumer: ConsumerRule,
    /// Publish recipes: where the temp file goes.
    #[serde(default)]
    pub temp: TempPlace,
    /// Lease recipes: what the lock is.
    #[serde(default)]
    pub lock: LockKind,
    /// Recipes that race a library (mutex, publish, claim): its npm package and exact version
    /// (`proper-lockfile@4.1.2`), installed into the cache before the run
    /// ([`crate::runtime::library::ensure`]); `-r NAME@VERSION` races another version.
    #[serde(default, deserialize_with = "library_spec")]
    pub library: Option<LibrarySpec>,
}

/// Reads `library = "NAME@VERSION"` ([`LibrarySpec::parse`]).
fn library_spec<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<LibrarySpec>, D::Error> {
    let text = String::deserialize(d)?;
    LibrarySpec::parse(&text).map(Some).map_err(serde::de::Error::custom)
}

/// One version of an npm library: `proper-lockfile@4.1.2`, `@rushstack/node-core-library@5.25.3`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct LibrarySpec {
    /// The npm package name, with its scope if any (`@rushstack/node-core-library`).
    pub name: String,
    /// The exact version.
    pub version: semver::Version,
}

impl LibrarySpec {
    /// Parses `NAME@VERSION` with an exact version (a scoped name keeps its leading `@`).
    ///
    /// Errors: why `text` is not that (no `@VERSION`, an empty name, a range or tag such as
    /// `4`, `^4.1.0`, `latest`).
    pub fn parse(text: &str) -> Result<LibrarySpec, String> {
        let (name, version) = text
            .rsplit_once('@')
            .filter(|(name, _)| !name.is_empty())
            .ok_or_else(|| format!("'{text}' is not NAME@VERSION"))?;
        let version = semver::Version::parse(version)
            .map_err(|_| format!("'{text}': a library's version is exact (MAJOR.MINOR.PATCH), not '{version}'"))?;
        Ok(LibrarySpec { name: name.to_string(), version })
    }
}

impl fmt::Display for LibrarySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.name, self.version)
    }
}

/// The npm names of the libraries the built-in recipes race (`library` in
/// `matrices/handoff/recipes.toml`), in the recipes' order, each once: the names `-r` and
/// `install` take as `NAME@VERSION` besides runtimes.
pub fn known_libraries() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for r in recipes() {
        if let Some(lib) = &r.library {
            if !names.contains(&lib.name.as_str()) {
                names.push(&lib.name);
            }
        }
    }
    names
}

/// The built-in recipes that race library `name` (its npm name), in the recipes' order.
pub fn recipes_racing(name: &str) -> impl Iterator<Item = &'static Recipe> + '_ {
    recipes().iter().filter(move |r| r.library.as_ref().is_some_and(|l| l.name == name))
}

/// True when `item` (an item of `-r` or `install`) names a library of [`known_libraries`]: `NAME@…`
/// with NAME one of them.
pub fn is_library_item(item: &str) -> bool {
    item.rsplit_once('@').is_some_and(|(name, _)| known_libraries().contains(&name))
}

/// The mutex recipe that races the user's own lock module (`conformance check FILE`); planned
/// only when a module is given.
pub const USER_LOCK_RECIPE: &str = "mutex.module";

/// The file of `matrices/handoff/recipes.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecipeFile {
    recipe: Vec<Recipe>,
}

/// Parses and checks recipe data (`text`, the TOML of `matrices/handoff/recipes.toml`).
///
/// Errors: the TOML error, or the first recipe that breaks a rule — its id must start with its
/// scenario's [`Scenario::recipe_prefix`] and a dot and appear once; `consumer` is a done-marker setting,
/// `temp` a publish one and `lock` a lease one.
pub fn parse_recipes(text: &str) -> Result<Vec<Recipe>, String> {
    let file: RecipeFile = toml::from_str(text).map_err(|e| e.to_string())?;
    for (i, r) in file.recipe.iter().enumerate() {
        let Some(prefix) = r.scenario.recipe_prefix() else {
            return Err(format!("{}: scenario {} has no recipes", r.id, r.scenario.as_str()));
        };
        if !r.id.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('.') && rest.len() > 1) {
            return Err(format!("{}: a {} recipe's id starts with '{prefix}.'", r.id, r.scenario.as_str()));
        }
        if file.recipe[..i].iter().any(|o| o.id == r.id) {
            return Err(format!("{}: appears twice", r.id));
        }
        if r.consumer != ConsumerRule::default() && r.scenario != Scenario::DoneMarker {
            return Err(format!("{}: `consumer` is a done-marker setting", r.id));
        }
        if r.temp != TempPlace::default() && r.scenario != Scenario::Publish {
            return Err(format!("{}: `temp` is a publish setting", r.id));
        }
        if r.lock != LockKind::default() && r.scenario != Scenario::Lease {
            return Err(format!("{}: `lock` is a lease setting", r.id));
        }
        if r.library.is_some() && !matches!(r.scenario, Scenario::Mutex | Scenario::Publish | Scenario::Claim) {
            return Err(format!("{}: `library` is a mutex, publish or claim setting", r.id));
        }
    }
    Ok(file.recipe)
}

/// Every recipe, in the order of `matrices/handoff/recipes.toml` (the tables' order).
pub fn recipes() -> &'static [Recipe] {
    static RECIPES: LazyLock<Vec<Recipe>> = LazyLock::new(|| {
        // built in and checked by a unit test: a failure here is a build defect, not input
        parse_recipes(RECIPES_TOML).unwrap_or_else(|e| panic!("matrices/handoff/recipes.toml: {e}"))
    });
    &RECIPES
}

/// The consumer every writer of the done-marker scenario is paired with.
pub const CONSUMER: &str = "consume.poll";

/// The recipe every reader of the publish scenario runs: read the whole target again and
/// again until stopped, counting complete, torn, empty and absent reads by comparing bytes.
pub const READER: &str = "read.poll";

impl Recipe {
    /// The recipes of `scenario`, in table order.
    pub fn of(scenario: Scenario) -> impl Iterator<Item = &'static Recipe> {
        recipes().iter().filter(move |r| r.scenario == scenario)
    }

    /// The recipe called `id`, if there is one.
    pub fn find(id: &str) -> Option<&'static Recipe> {
        recipes().iter().find(|r| r.id == id)
    }

    /// The recipe as a matrix row, so that its cells carry a variant id (the recipe name), a
    /// family (the scenario) and a call (its steps) like every other cell; it takes no source
    /// and creates a file.
    pub fn as_variant(&self) -> Variant {
        Variant {
            id: self.id.clone(),
            family: self.scenario.as_str().to_string(),
            call: self.steps.clone(),
            source: SourceKind::None,
            sources: Vec::new(),
            copies: false,
            creates: Creates::File,
            anti_pattern: self.anti_pattern,
            control: false,
            holds: false,
            form: Default::default(),
            intent: None,
            show: Vec::new(),
            note: String::new(),
            promise: None,
        }
    }
}

/// The content a publish recipe writes with `params.size = size` (bytes): the line
/// `conformance-publish <token> <size>\n`, then `size` bytes of `<token>\n` repeated (the last
/// copy cut), then `end <token>\n`. The probes build the same bytes (`publishContent` in
/// `probes/shared/session.mjs`); a reader compares what it read with them.
pub fn framed(token: &str, size: usize) -> Vec<u8> {
    let line = format!("{token}\n");
    let mut out = format!("conformance-publish {token} {size}\n").into_bytes();
    out.extend(line.bytes().cycle().take(size));
    out.extend(format!("end {token}\n").bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::{framed, parse_recipes, ConsumerRule, LockKind, Recipe, Scenario, TempPlace};

    #[test]
    fn framed_content_matches_the_probes_rule() {
        // the same bytes as publishContent({token: 'ab', params: {size: 10}}) in session.mjs
        assert_eq!(framed("ab", 10), b"conformance-publish ab 10\nab\nab\nab\naend ab\n");
        assert_eq!(framed("ab", 1).len(), "conformance-publish ab 1\n".len() + 1 + "end ab\n".len());
    }

    #[test]
    fn the_built_in_recipes_parse_and_each_scenario_has_some() {
        assert_eq!(Recipe::of(Scenario::Publish).count(), 6);
        assert_eq!(Recipe::of(Scenario::Claim).count(), 4);
        // the libraries' rows name an exact version of an npm package
        let libraries: Vec<String> =
            Recipe::of(Scenario::Publish).filter_map(|r| r.library.as_ref().map(ToString::to_string)).collect();
        assert_eq!(libraries, ["write-file-atomic@7.0.1", "steno@4.0.2", "atomically@2.1.1"]);
        assert_eq!(Recipe::of(Scenario::DoneMarker).count(), 4);
        assert_eq!(Recipe::of(Scenario::Lease).count(), 5);
        assert_eq!(Recipe::find("lease.dir-mtime").map(|r| r.lock), Some(LockKind::Dir));
        assert_eq!(Recipe::find("lease.breaker").map(|r| r.lock), Some(LockKind::File));
        assert_eq!(Recipe::find("done.size-stable").map(|r| r.consumer), Some(ConsumerRule::SizeStable));
        assert_eq!(Recipe::find("publish.temp-rename").map(|r| r.temp), Some(TempPlace::Beside));
    }

    #[test]
    fn recipe_data_that_breaks_a_rule_is_refused_naming_the_recipe() {
        let one = |fields: &str| parse_recipes(&format!("[[recipe]]\nsteps = \"s\"\n{fields}"));
        assert!(one("id = \"publish.x\"\nscenario = \"publish\"").is_ok());
        for (fields, says) in [
            ("id = \"claim.x\"\nscenario = \"publish\"", "claim.x: a publish recipe's id starts with 'publish.'"),
            ("id = \"done.\"\nscenario = \"done-marker\"", "starts with 'done.'"),
            ("id = \"race.x\"\nscenario = \"race\"", "race.x: scenario race has no recipes"),
            ("id = \"claim.x\"\nscenario = \"claim\"\nconsumer = \"size-stable\"", "a done-marker setting"),
            ("id = \"claim.x\"\nscenario = \"claim\"\ntemp = \"other-volume\"", "a publish setting"),
            ("id = \"claim.x\"\nscenario = \"claim\"\nlock = \"dir\"", "a lease setting"),
            ("id = \"claim.x\"\nscenario = \"claim\"\nspeed = 1", "unknown field `speed`"),
            (
                "id = \"lease.x\"\nscenario = \"lease\"\nlibrary = \"lockfile@1.0.4\"",
                "a mutex, publish or claim setting",
            ),
            ("id = \"mutex.x\"\nscenario = \"mutex\"\nlibrary = \"lockfile@1\"", "a library's version is exact"),
        ] {
            let e = one(fields).unwrap_err();
            assert!(e.contains(says), "{fields}: {e}");
        }
        let twice = "[[recipe]]\nid = \"claim.x\"\nscenario = \"claim\"\nsteps = \"s\"\n";
        assert_eq!(parse_recipes(&twice.repeat(2)).unwrap_err(), "claim.x: appears twice");
    }
}
