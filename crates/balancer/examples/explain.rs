//! Prints a plan for a snapshot file and the plan made on its result: a debugging aid.
use ballast_balancer::{apply_plan, plan, Policy};
use ballast_model::snapshot::Snapshot;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: explain SNAPSHOT")?;
    let s: Snapshot = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let now = ballast_balancer::time::parse_rfc3339_ms(&s.taken_at).ok_or("bad takenAt")?;
    let first = plan(&s, &Policy::default(), now);
    println!("{}", serde_json::to_string_pretty(&first)?);
    let second = plan(&apply_plan(&s, &first, None), &Policy::default(), now);
    println!("{}", serde_json::to_string_pretty(&second)?);
    Ok(())
}
