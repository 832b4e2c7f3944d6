//! The simulated clock: `now = start + real elapsed × speed`, in milliseconds since the epoch.

use std::time::Instant;

#[derive(Debug, Clone)]
pub struct SimClock {
    started: Instant,
    start_ms: i64,
    speed: f64,
}

impl SimClock {
    /// A clock that starts at `start_ms` (sim time) now and runs `speed` times real time.
    pub fn new(start_ms: i64, speed: f64) -> Self {
        let speed = if speed.is_finite() && speed > 0.0 {
            speed
        } else {
            1.0
        };
        SimClock {
            started: Instant::now(),
            start_ms,
            speed,
        }
    }

    pub fn now_ms(&self) -> i64 {
        let real = self.started.elapsed().as_secs_f64() * 1000.0;
        self.start_ms + (real * self.speed) as i64
    }

    pub fn speed(&self) -> f64 {
        self.speed
    }
}
