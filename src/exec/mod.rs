//! Process I/O: spawning probes, the protocol, the scratch folder. The only module besides
//! loading and report writing that touches the outside world.
//!
//! Floor: above the shared vocabulary, [`crate::matrix`] and [`crate::handoff`] (whose
//! framing the cmd loop writes); it reads neither the judges nor the command line.

pub mod amplify;
pub mod attach;
pub mod clock;
pub mod cmdloop;
pub mod contender;
pub mod driver;
pub mod fake;
pub mod fileclock;
pub mod health;
pub mod oneshot;
pub mod process;
pub mod protocol;
pub mod scratch;
pub mod session;
pub mod shloop;
pub mod threads;
