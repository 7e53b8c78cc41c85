//! `conformance runtimes`: list the runtimes found, with how `-r` selects each.

use crate::cli::RuntimesArgs;
use crate::error::Result;
use crate::exit_code;
use crate::matrix::Variant;
use crate::plan::{cleanup_runtimes, ready_runtimes, Paths};
use crate::report::table;
use crate::runtime::{discover, Fetch, Requested, Status};
use crate::status::{self, emit};

pub(super) fn cmd_runtimes(a: &RuntimesArgs, paths: &Paths) -> Result<i32> {
    let mut req = Requested::parse(&a.runtime)?;
    let store = paths.store();
    if a.runtime.is_empty() {
        req.add_installed(&store);
    } else {
        // a listing never downloads
        req.locate_versions(&store, Fetch::Never, "--runtime", &mut |_| {})?;
    }
    let mut d = discover(&req);
    // what `run` checks before measuring: the probe is built, starts and says hello
    let plan = crate::plan::RuntimesPlan::new(paths)?;
    let (scratch, ctx) = plan.common.workspace()?;
    let selected: Vec<&Variant> = plan.variants.iter().collect();
    let warnings = ready_runtimes(&mut d.runtimes, &ctx, &plan.options, &selected);
    cleanup_runtimes(&d.runtimes, &ctx);
    drop(scratch);
    for w in warnings {
        eprintln!("{w}");
    }
    if crate::interrupt::requested() {
        return Ok(exit_code::INTERRUPTED);
    }
    if a.json {
        let infos: Vec<status::Listed> = d.runtimes.iter().map(status::listed).collect();
        emit(&(serde_json::to_string_pretty(&infos).expect("serialises") + "\n"));
    } else {
        let header = ["runtime", "version", "select with", "status", "path / reason"].map(String::from);
        use crate::report::style::Tone;
        let rows = d.runtimes.iter().map(|rt| {
            // the status in colour (--color): found green, broken red, not found yellow
            let (st, tone, detail) = match &rt.status {
                Status::Found => {
                    ("found", Tone::Good, rt.path.as_ref().map(|p| p.display().to_string()).unwrap_or_default())
                }
                Status::NotFound(r) => ("not found", Tone::Unsure, r.clone()),
                Status::Broken(r) => ("broken", Tone::Bad, r.clone()),
            };
            [
                (rt.label.clone(), None),
                (rt.version.clone(), None),
                (rt.selector.clone(), None),
                (st.to_string(), Some(tone)),
                (detail, None),
            ]
        });
        let header = header.map(|h| (h, None));
        let style = crate::report::style::current();
        emit(&format!("{}\n", table::toned_table(std::iter::once(header).chain(rows), style)));
    }
    Ok(exit_code::OK)
}
