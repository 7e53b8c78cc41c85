//! Process I/O: spawning probes, the protocol, the scratch folder. The only module besides
//! loading and report writing that touches the outside world.

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
pub mod threads;
