//! The hand-off recipes measured as scenarios (`docs/HANDOFF.md`): which recipes exist, their
//! steps as the tables describe them, and the exact bytes a publish recipe writes.
//!
//! A recipe is a multi-step routine every session probe implements the same way
//! (`probes/shared/session.mjs` for Node, Bun and Deno; `probes/PROTOCOL.md`, protocol 2).
//! Nothing here says what a recipe should achieve: the counts come from the file system and
//! from what the probes read ([`crate::verdict::publish`]).

use crate::domain::Scenario;
use crate::matrix::{Creates, SourceKind, Variant};

/// One recipe of a hand-off scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recipe {
    /// The recipe's name in the protocol and in `results.json` (`publish.temp-rename`).
    pub id: &'static str,
    /// The scenario it belongs to.
    pub scenario: Scenario,
    /// Its steps, as the tables show them.
    pub steps: &'static str,
    /// The usual wrong way, measured beside the right one (the second article's "accident").
    pub anti_pattern: bool,
}

/// Every recipe, in table order.
pub const RECIPES: [Recipe; 10] = [
    Recipe {
        id: "publish.direct",
        scenario: Scenario::Publish,
        steps: "open the final name 'w', write in 4 KiB chunks, close",
        anti_pattern: true,
    },
    Recipe {
        id: "publish.temp-rename",
        scenario: Scenario::Publish,
        steps: "open a unique temp name beside it 'wx', write in 4 KiB chunks, close, rename onto the final name",
        anti_pattern: false,
    },
    Recipe {
        id: "publish.temp-rename-cross-volume",
        scenario: Scenario::Publish,
        steps:
            "as temp-rename, but the temp file on another file system (e.g. /dev/shm), then the runtime's rename/move",
        anti_pattern: true,
    },
    Recipe {
        id: "claim.list-then-open",
        scenario: Scenario::Claim,
        steps: "list incoming/, read an item, process it, delete it",
        anti_pattern: true,
    },
    Recipe {
        id: "claim.rename-claim",
        scenario: Scenario::Claim,
        steps: "list incoming/, rename an item into processing/<worker>/ (only success owns it), read, process, delete",
        anti_pattern: false,
    },
    Recipe {
        id: "claim.exclusive-marker",
        scenario: Scenario::Claim,
        steps: "list incoming/, create <item>.claim 'wx' (only success owns it), read, process, delete the item",
        anti_pattern: false,
    },
    Recipe {
        id: "done.marker-after-data",
        scenario: Scenario::DoneMarker,
        steps: "write the data file, close, then write the manifest <name>.done; the consumer waits for the manifest",
        anti_pattern: false,
    },
    Recipe {
        id: "done.marker-before-data",
        scenario: Scenario::DoneMarker,
        steps: "write the manifest <name>.done, then the data file; the consumer waits for the manifest",
        anti_pattern: true,
    },
    Recipe {
        id: "done.size-stable",
        scenario: Scenario::DoneMarker,
        steps: "write the data file; the consumer takes it once its size has not changed for a while",
        anti_pattern: true,
    },
    Recipe {
        id: "done.mtime-stable",
        scenario: Scenario::DoneMarker,
        steps: "write the data file; the consumer takes it once its mtime has not changed for a while",
        anti_pattern: true,
    },
];

/// The consumer every writer of the done-marker scenario is paired with.
pub const CONSUMER: &str = "consume.poll";

impl Recipe {
    /// The consumer's rule for this done-marker recipe: `marker`, `size-stable` or
    /// `mtime-stable`.
    pub fn consumer_rule(&self) -> &'static str {
        match self.id {
            "done.size-stable" => "size-stable",
            "done.mtime-stable" => "mtime-stable",
            _ => "marker",
        }
    }
}

/// The recipe every reader of the publish scenario runs: read the whole target again and
/// again until stopped, counting complete, torn, empty and absent reads by comparing bytes.
pub const READER: &str = "read.poll";

impl Recipe {
    /// The recipes of `scenario`, in table order.
    pub fn of(scenario: Scenario) -> impl Iterator<Item = &'static Recipe> {
        RECIPES.iter().filter(move |r| r.scenario == scenario)
    }

    /// The recipe as a matrix row, so that its cells carry a variant id (the recipe name), a
    /// family (the scenario) and a call (its steps) like every other cell; it takes no source
    /// and creates a file.
    pub fn as_variant(&self) -> Variant {
        Variant {
            id: self.id.to_string(),
            family: self.scenario.as_str().to_string(),
            call: self.steps.to_string(),
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
    use super::{framed, Recipe, Scenario, RECIPES};

    #[test]
    fn framed_content_matches_the_probes_rule() {
        // the same bytes as publishContent({token: 'ab', params: {size: 10}}) in session.mjs
        assert_eq!(framed("ab", 10), b"conformance-publish ab 10\nab\nab\nab\naend ab\n");
        assert_eq!(framed("ab", 1).len(), "conformance-publish ab 1\n".len() + 1 + "end ab\n".len());
    }

    #[test]
    fn every_scenario_recipe_is_named_by_its_scenario() {
        for r in RECIPES {
            // ids stay short: `done.` for the done-marker scenario
            let prefix = if r.scenario == Scenario::DoneMarker { "done" } else { r.scenario.as_str() };
            assert!(r.id.starts_with(&format!("{prefix}.")), "{}", r.id);
        }
        assert_eq!(Recipe::of(Scenario::Publish).count(), 3);
        assert_eq!(Recipe::of(Scenario::Claim).count(), 3);
        assert_eq!(Recipe::of(Scenario::DoneMarker).count(), 4);
    }
}
