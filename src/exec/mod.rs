//! Process I/O: spawning probes, the protocol, the scratch folder. The only module besides
//! loading and report writing that touches the outside world.

pub mod amplify;
pub mod contender;
pub mod health;
pub mod process;
pub mod protocol;
pub mod scratch;
