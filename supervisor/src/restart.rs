//! The restart policy as a pure function: `next(policy, state, event, now) -> (state, action)`.
//!
//! `now` is the time since the supervisor started, so tests drive it without a clock.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartPolicy {
    /// Wait before the first restart after a crash.
    pub initial: Duration,
    /// The wait doubles per crash in a row up to this cap.
    pub max: Duration,
    /// A worker that ran at least this long before dying starts again from `initial`.
    pub stable_after: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Never started yet.
    New,
    Running {
        since: Duration,
    },
    /// Died; to be started again at `until`.
    Backoff {
        until: Duration,
    },
    /// Told to stop; waiting for it to exit.
    Stopping,
    Stopped,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerState {
    pub phase: Phase,
    /// Restarts after a crash since the supervisor started.
    pub restarts: u64,
    /// Crashes without a stable run in between.
    pub crashes_in_a_row: u32,
}

impl WorkerState {
    pub const NEW: WorkerState = WorkerState {
        phase: Phase::New,
        restarts: 0,
        crashes_in_a_row: 0,
    };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Time passed.
    Tick,
    /// The process was started.
    Spawned,
    /// Starting the process failed (the binary is gone, for example).
    SpawnFailed,
    /// The process exited or was killed.
    Exited,
    /// The supervisor is stopping.
    Shutdown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    None,
    /// Start the process now.
    Spawn,
    /// Send SIGTERM to its process group.
    Terminate,
}

impl RestartPolicy {
    /// Wait before restarting after `crashes_in_a_row` crashes (1 = the first).
    pub fn delay(&self, crashes_in_a_row: u32) -> Duration {
        let doublings = crashes_in_a_row.saturating_sub(1).min(31);
        self.initial
            .checked_mul(1u32 << doublings)
            .map_or(self.max, |d| d.min(self.max))
    }

    pub fn next(&self, state: WorkerState, event: Event, now: Duration) -> (WorkerState, Action) {
        let mut s = state;
        let action = match (state.phase, event) {
            (Phase::New, Event::Tick) => Action::Spawn,
            (Phase::Backoff { until }, Event::Tick) if now >= until => Action::Spawn,
            (Phase::New | Phase::Backoff { .. }, Event::Spawned) => {
                if matches!(state.phase, Phase::Backoff { .. }) {
                    s.restarts += 1;
                }
                s.phase = Phase::Running { since: now };
                Action::None
            }
            (Phase::Running { since }, Event::Exited) => {
                s.crashes_in_a_row = if now.saturating_sub(since) >= self.stable_after {
                    1
                } else {
                    state.crashes_in_a_row.saturating_add(1)
                };
                s.phase = Phase::Backoff {
                    until: now + self.delay(s.crashes_in_a_row),
                };
                Action::None
            }
            (Phase::New | Phase::Backoff { .. }, Event::SpawnFailed) => {
                s.crashes_in_a_row = state.crashes_in_a_row.saturating_add(1);
                s.phase = Phase::Backoff {
                    until: now + self.delay(s.crashes_in_a_row),
                };
                Action::None
            }
            (Phase::Running { .. }, Event::Shutdown) => {
                s.phase = Phase::Stopping;
                Action::Terminate
            }
            (Phase::New | Phase::Backoff { .. }, Event::Shutdown) => {
                s.phase = Phase::Stopped;
                Action::None
            }
            (Phase::Stopping, Event::Exited) => {
                s.phase = Phase::Stopped;
                Action::None
            }
            _ => Action::None,
        };
        (s, action)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: RestartPolicy = RestartPolicy {
        initial: Duration::from_secs(1),
        max: Duration::from_secs(60),
        stable_after: Duration::from_secs(30),
    };

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn a_new_worker_is_spawned_on_the_first_tick() {
        let (s, a) = POLICY.next(WorkerState::NEW, Event::Tick, secs(0));
        assert_eq!(a, Action::Spawn);
        let (s, a) = POLICY.next(s, Event::Spawned, secs(0));
        assert_eq!(a, Action::None);
        assert_eq!(s.phase, Phase::Running { since: secs(0) });
        assert_eq!(s.restarts, 0);
    }

    #[test]
    fn backoff_doubles_per_crash_in_a_row_up_to_the_cap() {
        let delays: Vec<u64> = (1..=9).map(|n| POLICY.delay(n).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(POLICY.delay(u32::MAX), secs(60));
    }

    #[test]
    fn a_crashed_worker_is_restarted_after_its_backoff_and_counted() {
        let mut s = POLICY.next(WorkerState::NEW, Event::Spawned, secs(0)).0;
        let mut now = secs(1);
        for expected_delay in [1, 2, 4] {
            s = POLICY.next(s, Event::Exited, now).0;
            let until = now + secs(expected_delay);
            assert_eq!(s.phase, Phase::Backoff { until });
            assert_eq!(
                POLICY.next(s, Event::Tick, until - secs(1) / 2).1,
                Action::None
            );
            assert_eq!(POLICY.next(s, Event::Tick, until).1, Action::Spawn);
            s = POLICY.next(s, Event::Spawned, until).0;
            now = until + secs(1);
        }
        assert_eq!(s.restarts, 3);
        assert_eq!(s.crashes_in_a_row, 3);
    }

    #[test]
    fn a_stable_run_resets_the_backoff() {
        let mut s = POLICY.next(WorkerState::NEW, Event::Spawned, secs(0)).0;
        s.crashes_in_a_row = 6;
        s = POLICY.next(s, Event::Exited, secs(100)).0;
        assert_eq!(s.crashes_in_a_row, 1);
        assert_eq!(s.phase, Phase::Backoff { until: secs(101) });
    }

    #[test]
    fn a_failed_spawn_backs_off_like_a_crash() {
        let (s, _) = POLICY.next(WorkerState::NEW, Event::SpawnFailed, secs(5));
        assert_eq!(s.phase, Phase::Backoff { until: secs(6) });
        let (s, _) = POLICY.next(s, Event::SpawnFailed, secs(6));
        assert_eq!(s.phase, Phase::Backoff { until: secs(8) });
    }

    #[test]
    fn shutdown_terminates_running_workers_and_cancels_pending_restarts() {
        let running = POLICY.next(WorkerState::NEW, Event::Spawned, secs(0)).0;
        let (s, a) = POLICY.next(running, Event::Shutdown, secs(1));
        assert_eq!((s.phase, a), (Phase::Stopping, Action::Terminate));
        let (s, a) = POLICY.next(s, Event::Exited, secs(2));
        assert_eq!((s.phase, a), (Phase::Stopped, Action::None));
        assert_eq!(POLICY.next(s, Event::Tick, secs(100)).1, Action::None);

        let waiting = POLICY.next(running, Event::Exited, secs(1)).0;
        let (s, a) = POLICY.next(waiting, Event::Shutdown, secs(1));
        assert_eq!((s.phase, a), (Phase::Stopped, Action::None));
    }
}
