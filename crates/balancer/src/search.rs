//! The search: repeatedly take the broker farthest from its fair share of a load that must be
//! evened, and apply the move that makes the cluster most even per unit of cost. Deterministic:
//! candidates are generated in a fixed order and compared with a total order, so the number of
//! worker threads never changes the result.

use std::cell::Cell;
use std::collections::BTreeSet;
use std::ops::Range;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard};
use std::thread::Scope;
use std::time::{Duration, Instant};

use crate::model::{effect, Action, Bx, Model, Why, DISK};
use crate::vocab::{RepairKey, Targets};

/// Why candidates for one (broker, load) were refused; decides the structural-limit cause.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    pub cooldown: u32,
    pub rack: u32,
    pub spread: u32,
    pub overshoot: u32,
    pub conflict: u32,
    pub evaluated: u64,
}

impl Tally {
    fn merge(&mut self, o: &Tally) {
        self.cooldown += o.cooldown;
        self.rack += o.rack;
        self.spread += o.spread;
        self.overshoot += o.overshoot;
        self.conflict += o.conflict;
        self.evaluated += o.evaluated;
    }
}

#[derive(Debug, Clone, Copy)]
struct Scored {
    action: Action,
    score: f64,
}

fn better(a: &Scored, b: &Scored) -> bool {
    match a.score.total_cmp(&b.score) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => a.action.key() < b.action.key(),
    }
}

/// The outcome of a search.
pub struct SearchResult {
    pub iterations: u64,
    pub evaluated: u64,
    pub applied: u64,
    /// (broker index, load) pairs left beyond the threshold, with why.
    pub stuck: Vec<(Bx, usize, Tally)>,
    pub capped: bool,
    /// Steps whose candidates were evaluated on more than one thread.
    pub parallel_steps: u64,
    /// The most threads one step used.
    pub threads_used: usize,
}

pub struct Search<'a> {
    pub model: &'a mut Model,
    pub targets: &'a Targets,
    pub max_partitions: Option<usize>,
    pub workers: usize,
    /// [`crate::Policy::parallel_min_chunk`]
    pub min_chunk: usize,
    /// Typical replica size, to price copies.
    pub typical_size: f64,
    pub mode: Mode,
}

/// Which move kinds a search may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Leadership changes inside the replica sets only: they copy no data, so they go first.
    Leadership,
    /// Every move kind: leadership changes, replica moves and replica exchanges.
    Full,
}

/// Where a step aims, as a fraction of the threshold from fair share: a broker beyond the
/// threshold sheds (or takes) about what brings it this far inside, not all the way to fair
/// share, so a plan copies little more than the bytes that must move. It is also the edge of
/// the band the objective mostly ignores (see [`objective`]).
pub(crate) const AIM: f64 = 0.95;

/// The weight of the distance inside the band in [`objective`]: small, so that within the
/// band the objective only breaks ties.
const INSIDE: f64 = 0.03;

/// What a copy between racks costs against one within a rack: a slight preference for the
/// same rack among moves that serve the goal equally.
const CROSS_RACK: f64 = 1.1;

/// One broker's share of the objective for one load, from its distance `d` from fair share (a
/// fraction) and the band `band` (the same unit): the square of how far it lies beyond the
/// band, plus a small weight on the square of the distance itself. A copy into (or out of) a
/// broker already inside the band gains little, so copies go where the targets need them and
/// a broker is brought just inside rather than towards fair share: the bytes stay close to
/// what must move.
pub(crate) fn objective(d: f64, band: f64) -> f64 {
    let beyond = (d.abs() - band).max(0.0);
    beyond * beyond + INSIDE * d * d
}

/// Replica exchanges considered per broker pair and step.
const EXCHANGES: usize = 6;

/// Candidate destinations or sources considered per step.
const FANOUT: usize = 8;

/// Partitions fully evaluated per step, the closest to the amount that should move.
const SHORTLIST: usize = 48;

/// First leadership changes completed into pairs ([`Action::LeaderPair`]) when no single move
/// helps.
const PAIR_FIRST: usize = 8;

/// Partitions that may leave their rack, shortlisted per step on top of [`SHORTLIST`].
const CROSSING: usize = 12;

/// Candidates applied per step at most: the best, then runners-up that still help.
const BATCH: usize = 8;

/// Partitions of one broker looked at per step, at most: a deterministic stride through its
/// list, starting at a different place every step.
const SAMPLE: usize = 256;

/// `SAMPLE` entries of `list` (all of it when shorter), starting at an offset derived from `salt`.
fn sample(list: &[u32], salt: u64) -> impl Iterator<Item = u32> + '_ {
    let n = list.len();
    let (take, stride) = if n <= SAMPLE {
        (n, 1)
    } else {
        (SAMPLE, n / SAMPLE)
    };
    let start = if n == 0 {
        0
    } else {
        (salt.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 17) as usize % n
    };
    (0..take).map(move |i| list[(start + i * stride) % n])
}

/// The partitions `pis` yields (at most [`SAMPLE`]), in order, with the cache lines a step
/// reads of each loaded first: the partitions are scattered over the whole array, and a tight
/// loop of independent loads keeps many misses in flight where the step's own loop, which does
/// real work per partition, waits for them one or two at a time.
fn warmed(model: &Model, pis: impl Iterator<Item = u32>) -> Sampled {
    let mut out = Sampled {
        items: [0; SAMPLE],
        len: 0,
    };
    for pi in pis.take(SAMPLE) {
        out.items[out.len] = pi;
        out.len += 1;
    }
    let mut touched = 0usize;
    for &pi in out.as_slice() {
        if let Some(p) = model.parts.get(pi as usize) {
            touched += usize::from(p.leader.is_some()) + p.isr.len();
        }
    }
    std::hint::black_box(touched);
    out
}

/// Up to [`SAMPLE`] partition indexes, on the stack.
struct Sampled {
    items: [u32; SAMPLE],
    len: usize,
}

impl Sampled {
    fn as_slice(&self) -> &[u32] {
        &self.items[..self.len]
    }

    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.as_slice().iter().copied()
    }
}

/// A partition in the cheap scan: how far its share is from the ideal amount, a tie-breaker
/// that spreads equal shares over many topics, and a broker tag (swap target or source).
///
/// Ranked by closeness, then bytes (the bytes the move copies, 0 for a leadership change: among
/// equal shares, as every replica is of a count, the smallest copy first), then the spread
/// tie-breaker, the partition and the tag. The order is kept as integers (`f64::total_cmp` is
/// the order of [`ordered`] bits): a step sorts hundreds of these.
#[derive(Clone, Copy)]
struct Ranked {
    /// Closeness's and bytes' [`ordered`] bits.
    key: u128,
    /// The spread tie-breaker, then the partition.
    then: u64,
    closeness: f64,
    pi: u32,
    tag: Bx,
}

/// `x`'s bits as an integer whose order is `f64::total_cmp`'s.
fn ordered(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

impl Ranked {
    fn new(difference: f64, pi: u32, tag: Bx) -> Self {
        Self::copy(difference, 0.0, pi, tag)
    }

    /// A replica copy of `bytes`.
    fn copy(difference: f64, bytes: f64, pi: u32, tag: Bx) -> Self {
        let closeness = difference.abs();
        let spread = pi.wrapping_mul(0x9E37_79B1).rotate_left(7);
        Self {
            key: (u128::from(ordered(closeness)) << 64) | u128::from(ordered(bytes)),
            then: (u64::from(spread) << 32) | u64::from(pi),
            closeness,
            pi,
            tag,
        }
    }

    fn order(a: &Ranked, b: &Ranked) -> std::cmp::Ordering {
        a.key
            .cmp(&b.key)
            .then(a.then.cmp(&b.then))
            .then(a.tag.cmp(&b.tag))
    }
}

/// Up to `keep` ([`SHORTLIST`], or what a split leadership step still lacks) entries that pass
/// `admissible`, closest first, in a deterministic order. Entries are checked in rank order, in
/// growing windows, so the usual case sorts and checks only a small prefix: the first window is
/// a third more than `keep` ([`FIRST_WINDOW`] for [`SHORTLIST`]), each next one four times the
/// last. Which entries are checked (and tallied) does not depend on the windows: they are
/// checked in rank order (a total order) until `keep` pass. Each sorted window is handed to
/// `warm` before its entries are checked, to load what the checks read (see [`warmed`]).
fn shortlist(
    mut ranked: Vec<Ranked>,
    keep: usize,
    warm: impl Fn(&[Ranked]),
    mut admissible: impl FnMut(&Ranked) -> bool,
) -> Vec<Ranked> {
    let mut out = Vec::with_capacity(keep);
    let mut start = 0;
    let mut window = (keep + keep / 3).max(1);
    while start < ranked.len() && out.len() < keep {
        let end = (start + window).min(ranked.len());
        let rest = &mut ranked[start..];
        if end - start < rest.len() {
            rest.select_nth_unstable_by(end - start - 1, Ranked::order);
        }
        rest[..end - start].sort_unstable_by(Ranked::order);
        warm(&ranked[start..end]);
        for r in &ranked[start..end] {
            if out.len() == keep {
                break;
            }
            if admissible(r) {
                out.push(*r);
            }
        }
        start = end;
        window *= 4;
    }
    out
}

/// The first window [`shortlist`] sorts: a little more than [`SHORTLIST`], as most entries
/// pass (a window sorts what it holds, and a step's ranking is mostly its sort).
const FIRST_WINDOW: usize = SHORTLIST + SHORTLIST / 3;

/// The smallest chunk the pool's own tests split steps into.
#[cfg(test)]
const MIN_CHUNK: usize = 48;

/// What a step hands to the threads.
enum Task {
    /// Score these candidates: a chunk is a range of them.
    Evaluate(Vec<Action>),
    /// Look for replica exchanges between these (giving, taking) broker pairs, each moving at
    /// most the amount given: every pair's search is independent of the others', and a chunk
    /// is a range of pairs.
    Exchanges(Vec<(Bx, Bx)>, f64),
    /// A leadership step's ranking ([`View::leader_chunk`]): chunk `i` of `n` takes every
    /// `n`-th sampled partition from the `i`-th. `ideal` is what should move, `over` whether the
    /// broker is above fair share.
    Leaders { ideal: f64, over: bool },
    /// Check and score these leadership changes ([`View::check_chunk`]): a chunk is a range.
    Check(Vec<Ranked>),
    /// Which of `b`'s partitions may leave their rack ([`View::movable`]), ranked by how close
    /// their share of `load` is to `ideal`: a chunk is a range of `b`'s partitions.
    Movable { ideal: f64 },
    /// The copies `b` could take from `sources` ([`View::pulls`]): a chunk is a range of
    /// sources.
    Pulls { ideal: f64, sources: Vec<Bx> },
    /// The copies that could repair partition `pi`'s racks ([`crate::plan`]'s rack repairs,
    /// on a pool of their own): a chunk is a range of destination brokers.
    Repair { pi: u32 },
}

/// A step's work as handed to the threads: `items` split into `chunks`, each done by whichever
/// thread claims it first.
pub(crate) struct Job {
    step: u64,
    b: Bx,
    load: usize,
    task: Task,
    items: usize,
    chunks: usize,
}

impl Job {
    /// The items of chunk `i`, for the tasks split into consecutive ranges.
    pub(crate) fn range(&self, i: usize) -> Range<usize> {
        let chunk = self.items.div_ceil(self.chunks.max(1));
        (i * chunk).min(self.items)..((i + 1) * chunk).min(self.items)
    }

    /// The partition whose rack repair this job scores, if it is one ([`Task::Repair`]).
    pub(crate) fn repair_of(&self) -> Option<u32> {
        match self.task {
            Task::Repair { pi } => Some(pi),
            _ => None,
        }
    }
}

/// One leadership change a [`Task::Check`] chunk checked, in order.
#[derive(Clone, Copy)]
struct Checked {
    /// Why the shortlist's check refused it, or (when it passed) why the scoring did, which
    /// also counts it `evaluated`.
    tally: Tally,
    passed: bool,
    scored: Option<Scored>,
}

/// A chunk's result: the scored candidates ([`Task::Evaluate`]), the exchanges found
/// ([`Task::Exchanges`]), the leadership changes ranked ([`Task::Leaders`]: the first `sorted`
/// in rank order) or checked ([`Task::Check`]), and why candidates were refused.
#[derive(Default)]
pub(crate) struct Outcome {
    scored: Vec<Scored>,
    found: Vec<Action>,
    ranked: Vec<Ranked>,
    sorted: usize,
    checked: Vec<Checked>,
    tally: Tally,
    /// The best copy of a chunk of a rack repair's ([`Task::Repair`]).
    repair: Option<RepairKey>,
}

impl Outcome {
    /// A chunk of a rack repair's outcome: the best copy of its range.
    pub(crate) fn of_repair(repair: Option<RepairKey>) -> Outcome {
        Outcome {
            repair,
            ..Outcome::default()
        }
    }
}

/// Bits of [`Shared::state`] that count the posted job's claimed chunks.
const CHUNK_BITS: u32 = 16;

/// How long an idle helper spins (yielding the CPU every [`YIELD_EVERY`] spins), waiting for
/// the next job, before it parks: several leadership steps' worth, so the helpers of a search
/// that posts every 10-30 µs never sleep (waking a parked thread takes tens of microseconds),
/// and those of a search that has gone quiet stop taking a CPU.
const SPIN: Duration = Duration::from_micros(200);

/// Spins between two yields of the CPU while waiting (a microsecond or two): a thread that
/// waits for another on the same CPU (when the others are busy) must let it run.
const YIELD_EVERY: u32 = 64;

/// What the searching thread and its helpers share.
struct Shared {
    /// The posted job's generation (high bits) and the next chunk to claim (the low
    /// [`CHUNK_BITS`]): one word, so a thread claims a chunk only of the job it read.
    state: AtomicU64,
    /// The posted job, with its generation.
    job: Mutex<Option<(u64, Arc<Job>)>>,
    /// The outcomes of the chunks the helpers did, by chunk.
    outcomes: Mutex<Vec<Option<std::thread::Result<Outcome>>>>,
    /// Chunks of the posted job the helpers finished.
    done: AtomicUsize,
    /// Per helper: parked, or about to park; a post unparks it.
    parked: Vec<AtomicBool>,
    stop: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Claims the next chunk of job `gen`, if that job is still posted and has one left.
    fn claim(&self, gen: u64, chunks: usize) -> Option<usize> {
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            let next = (state & ((1 << CHUNK_BITS) - 1)) as usize;
            if state >> CHUNK_BITS != gen || next >= chunks {
                return None;
            }
            match self.state.compare_exchange_weak(
                state,
                state + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(next),
                Err(now) => state = now,
            }
        }
    }

    /// Helper `me`'s wait for a job newer than `seen`: spins for [`SPIN`], then parks until a
    /// post unparks it. `None` once the pool stops.
    fn wait(&self, me: usize, seen: u64) -> Option<(u64, Arc<Job>)> {
        let mut since = Instant::now();
        let mut spins = 0u32;
        loop {
            if self.stop.load(Ordering::Acquire) {
                return None;
            }
            if self.state.load(Ordering::Acquire) >> CHUNK_BITS != seen {
                if let Some((gen, job)) = lock(&self.job).as_ref() {
                    return Some((*gen, job.clone()));
                }
            }
            spins = spins.wrapping_add(1);
            if !spins.is_multiple_of(YIELD_EVERY) {
                std::hint::spin_loop();
                continue;
            }
            // Now and then: let another thread on this CPU (the searching one, when the other
            // CPUs are busy) run, and read the clock.
            if since.elapsed() < SPIN {
                std::thread::yield_now();
                continue;
            }
            // Flag first, then look again: a post after the look sees the flag and unparks
            // (an unpark before the park makes it return at once).
            self.parked[me].store(true, Ordering::SeqCst);
            if self.state.load(Ordering::SeqCst) >> CHUNK_BITS == seen
                && !self.stop.load(Ordering::SeqCst)
            {
                std::thread::park();
            }
            self.parked[me].store(false, Ordering::SeqCst);
            since = Instant::now();
            spins = 0;
        }
    }

    /// A helper's life: does the chunks it claims of each job, until the pool stops. A panic
    /// is kept as the chunk's outcome, for the searching thread to resume.
    fn serve<F>(&self, me: usize, work: &F)
    where
        F: Fn(&Job, usize) -> Outcome + Sync,
    {
        let mut seen = 0;
        while let Some((gen, job)) = self.wait(me, seen) {
            seen = gen;
            while let Some(i) = self.claim(gen, job.chunks) {
                let out = catch_unwind(AssertUnwindSafe(|| work(&job, i)));
                if let Some(slot) = lock(&self.outcomes).get_mut(i) {
                    *slot = Some(out);
                }
                self.done.fetch_add(1, Ordering::Release);
            }
        }
    }
}

/// Helper threads that live as long as one search (or one round of rack repairs,
/// [`Pool::repair`]) and take chunks of a step's work (scoring candidates, looking for exchanges
/// between broker pairs, a leadership step's ranking and scoring, a repair's candidate copies).
/// The searching thread posts a job and claims chunks too, as do the helpers, from one
/// atomic word: a helper that is asleep or slow to start costs the step nothing, as this thread
/// does what nobody has claimed, and a helper that has just finished a step is spinning when
/// the next job comes (a channel's hand-off cost about 13 µs a step, a leadership step's whole
/// gain). Outcomes are merged in chunk order and ranked with a total order, so how the work was
/// split, and who did which chunk, never shows in the plan. A panic in a helper is resumed on
/// the searching thread: a lost chunk never silently changes the plan.
pub(crate) struct Pool {
    /// A step is split only when every chunk gets at least this many candidates.
    min_chunk: usize,
    /// Chunks a step's candidates or broker pairs may be split into (the workers).
    workers: usize,
    /// Threads doing the chunks, this one included: the workers, at most one per CPU (more
    /// would only take turns on the CPUs, and spinning helpers would take them from this one).
    threads: usize,
    shared: Arc<Shared>,
    helpers: Vec<std::thread::Thread>,
    /// The last job's generation.
    gen: Cell<u64>,
}

impl Pool {
    pub(crate) fn start<'scope, 'env, F>(
        scope: &'scope Scope<'scope, 'env>,
        workers: usize,
        cpus: usize,
        min_chunk: usize,
        work: &'env F,
    ) -> Pool
    where
        F: Fn(&Job, usize) -> Outcome + Sync,
    {
        let workers = workers.clamp(1, 1 << (CHUNK_BITS - 1));
        let threads = workers.min(cpus.max(1));
        let shared = Arc::new(Shared {
            state: AtomicU64::new(0),
            job: Mutex::new(None),
            outcomes: Mutex::new(Vec::new()),
            done: AtomicUsize::new(0),
            parked: (1..threads).map(|_| AtomicBool::new(false)).collect(),
            stop: AtomicBool::new(false),
        });
        let helpers = (1..threads)
            .map(|i| {
                let shared = shared.clone();
                scope
                    .spawn(move || shared.serve(i - 1, work))
                    .thread()
                    .clone()
            })
            .collect();
        Pool {
            min_chunk: min_chunk.max(1),
            workers,
            threads,
            shared,
            helpers,
            gen: Cell::new(0),
        }
    }

    /// Scores the copies that could repair partition `pi`'s racks to `brokers` destinations
    /// with `run`, in ranges of destinations: one per thread, each with at least
    /// [`REPAIR_CHUNK`] brokers. Each range's best copy, in range order, and the number of
    /// chunks.
    pub(crate) fn repair(
        &self,
        pi: u32,
        brokers: usize,
        run: impl Fn(&Job, usize) -> Outcome,
    ) -> (Vec<Option<RepairKey>>, usize) {
        let chunks = self.threads.min(brokers / REPAIR_CHUNK).max(1);
        let job = Job {
            step: 0,
            b: 0,
            load: 0,
            task: Task::Repair { pi },
            items: brokers,
            chunks,
        };
        let best = self.split(job, run).into_iter().map(|o| o.repair).collect();
        (best, chunks)
    }

    /// Chunks a step with `n` candidates is split into.
    fn threads_for(&self, n: usize) -> usize {
        self.workers.min(n / self.min_chunk).max(1)
    }

    /// Threads the exchanges between `n` broker pairs are split over: one pair's search samples
    /// and sorts hundreds of partitions, enough to be worth handing over on its own. Every pair
    /// is a chunk of its own ([`View::all_exchanges`]), claimed by whichever thread is free.
    fn threads_for_pairs(&self, n: usize) -> usize {
        self.workers.min(n).max(1)
    }

    /// Chunks the sampling of `n` sources' partitions for the copies a broker could take
    /// ([`View::pulls`]) is split into: one per thread (a source's sample is 64 partitions or
    /// more, tens of microseconds).
    fn threads_for_sources(&self, n: usize) -> usize {
        self.threads.min(n).max(1)
    }

    /// Chunks the scan of `n` partitions of a broker for those that may leave their rack
    /// ([`View::movable`]) is split into: one per thread, each with at least [`SCAN_CHUNK`].
    fn threads_for_scan(&self, n: usize) -> usize {
        self.threads.min(n / SCAN_CHUNK).max(1)
    }

    /// Chunks a leadership step over `sampled` partitions is split into: one per thread, each
    /// with at least [`LEADER_CHUNK`] partitions (a chunk of a split step checks and scores more
    /// changes than its share, see [`View::leader_chunk`], so more chunks than threads only
    /// cost).
    fn threads_for_leaders(&self, sampled: usize) -> usize {
        self.threads.min(sampled / LEADER_CHUNK).max(1)
    }

    /// Evaluates `actions` in [`Pool::threads_for`] chunks with `run` (the chunk's work); the
    /// chunks' outcomes in chunk order, and the number of chunks.
    fn evaluate(
        &self,
        (step, b, load): (u64, Bx, usize),
        actions: Vec<Action>,
        run: impl Fn(&Job, usize) -> Outcome,
    ) -> (Vec<Outcome>, usize) {
        let chunks = self.threads_for(actions.len());
        let job = Job {
            step,
            b,
            load,
            items: actions.len(),
            task: Task::Evaluate(actions),
            chunks,
        };
        (self.split(job, run), chunks)
    }

    /// Does `job`'s chunks: posts it to the helpers, then claims chunks here (running `run`)
    /// until none is left, and waits for those the helpers claimed. The outcomes in chunk order.
    fn split(&self, job: Job, run: impl Fn(&Job, usize) -> Outcome) -> Vec<Outcome> {
        let chunks = job.chunks.max(1);
        if chunks == 1 || self.helpers.is_empty() {
            return (0..chunks).map(|i| run(&job, i)).collect();
        }
        let shared = &*self.shared;
        let gen = self.gen.get() + 1;
        self.gen.set(gen);
        let job = Arc::new(job);
        {
            let mut outcomes = lock(&shared.outcomes);
            outcomes.clear();
            outcomes.resize_with(chunks, || None);
        }
        shared.done.store(0, Ordering::SeqCst);
        *lock(&shared.job) = Some((gen, job.clone()));
        shared.state.store(gen << CHUNK_BITS, Ordering::SeqCst);
        for (i, helper) in self.helpers.iter().enumerate() {
            if shared.parked[i].swap(false, Ordering::SeqCst) {
                helper.unpark();
            }
        }
        let mut mine: Vec<Option<Outcome>> = (0..chunks).map(|_| None).collect();
        let mut claimed = 0;
        while let Some(i) = shared.claim(gen, chunks) {
            mine[i] = Some(run(&job, i));
            claimed += 1;
        }
        // The helpers' chunks are under way (claimed after the post): a few microseconds,
        // unless a helper shares this CPU (the others busy) and waits for it: the CPU is given
        // away now and then.
        let mut spins = 0u32;
        while shared.done.load(Ordering::Acquire) < chunks - claimed {
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(YIELD_EVERY) {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        let mut outcomes = lock(&shared.outcomes);
        let mut out = Vec::with_capacity(chunks);
        for (i, m) in mine.into_iter().enumerate() {
            match m.or_else(|| {
                outcomes.get_mut(i).and_then(Option::take).map(|r| match r {
                    Ok(o) => o,
                    Err(panic) => resume_unwind(panic),
                })
            }) {
                Some(o) => out.push(o),
                None => panic!("a search helper finished a chunk without its outcome"),
            }
        }
        out
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for helper in &self.helpers {
            helper.unpark();
        }
    }
}

/// The fewest shortlisted leadership changes a chunk of a split leadership step scores.
const LEADER_SCORES: usize = 8;

/// How many more than its share of a shortlist a chunk of a split leadership step's ranking
/// sorts: the merge takes the first entries of every chunk in rank order as far as the sorted
/// ones reach, and a chunk holds more than its share of the first.
const LEADER_SORTED: usize = 16;

/// How many of the merged ranking's first entries a split leadership step checks and scores on
/// the threads: a few more than a shortlist, as most pass.
const LEADER_CHECKED: usize = SHORTLIST + SHORTLIST / 12;

/// The fewest sampled partitions a chunk of a split leadership step gets.
const LEADER_CHUNK: usize = 64;

/// The fewest destination brokers a chunk of a split rack repair gets: a repair scores about
/// two copies a broker of the racks the partition lacks, about 0.1 µs each (200x300000
/// `random`: 133 copies, 16-18 µs a repair), against about 0.2 µs to hand a chunk over.
const REPAIR_CHUNK: usize = 32;

/// The fewest partitions a chunk of a split scan for those that may leave their rack gets
/// (about a microsecond each at 200 brokers, mostly a cache miss on the partition).
const SCAN_CHUNK: usize = 1024;

pub(crate) fn read<'a, 'm>(lock: &'a RwLock<&'m mut Model>) -> RwLockReadGuard<'a, &'m mut Model> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

impl Search<'_> {
    pub fn run(self) -> SearchResult {
        let Search {
            model,
            targets,
            max_partitions,
            workers,
            min_chunk,
            typical_size,
            mode,
        } = self;
        // Partitions an earlier stage (the drain, an earlier pass) changed already count against
        // the cap: moving them again costs nothing more.
        // Without a cap nothing reads them: not collected.
        let touched: BTreeSet<u32> = if max_partitions.is_some() {
            (0..model.parts.len() as u32)
                .filter(|&pi| model.parts[pi as usize].changed())
                .collect()
        } else {
            BTreeSet::new()
        };
        let lock = RwLock::new(model);
        let work = |job: &Job, i: usize| {
            let guard = read(&lock);
            View {
                model: &guard,
                targets,
                typical_size,
                mode,
                step: job.step,
            }
            .run_chunk(job, i)
        };
        // Not asked with one worker: nothing would use it.
        let cpus = if workers > 1 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            1
        };
        std::thread::scope(|scope| {
            let pool = Pool::start(scope, workers, cpus, min_chunk, &work);
            steps(
                &lock,
                targets,
                (typical_size, mode),
                max_partitions,
                touched,
                &pool,
            )
        })
    }
}

/// The search loop: the worst (broker, load) each step, its best moves applied between steps.
fn steps(
    lock: &RwLock<&mut Model>,
    targets: &Targets,
    (typical_size, mode): (f64, Mode),
    max_partitions: Option<usize>,
    mut touched: BTreeSet<u32>,
    pool: &Pool,
) -> SearchResult {
    let write = || lock.write().unwrap_or_else(PoisonError::into_inner);
    let full = |touched: &BTreeSet<u32>| max_partitions.is_some_and(|cap| touched.len() >= cap);
    let mut stuck: Vec<(Bx, usize, Tally)> = Vec::new();
    let mut stuck_set: BTreeSet<(Bx, usize)> = BTreeSet::new();
    let mut result = SearchResult {
        iterations: 0,
        evaluated: 0,
        applied: 0,
        stuck: Vec::new(),
        capped: false,
        parallel_steps: 0,
        threads_used: 1,
    };
    let limit = 4 * read(lock).parts.len() as u64 + 1000;
    // Rounds: a pair found stuck may become movable after later moves, so once a round ends
    // with progress, the stuck marks are cleared and the search goes again. Every applied
    // move strictly lowers the objective, so this ends.
    loop {
        let applied_before = result.applied;
        stuck.clear();
        stuck_set.clear();
        while result.iterations < limit {
            result.iterations += 1;
            let step = result.iterations;
            let is_full = full(&touched);
            let (b, load, best, tally, threads) = {
                let guard = read(lock);
                let v = View {
                    model: &guard,
                    targets,
                    typical_size,
                    mode,
                    step,
                };
                let Some((b, load)) = v.worst(&stuck_set) else {
                    break;
                };
                let (best, tally, threads) =
                    v.best_moves(b, load, is_full.then_some(&touched), pool);
                (b, load, best, tally, threads)
            };
            result.evaluated += tally.evaluated;
            if threads > 1 {
                result.parallel_steps += 1;
                result.threads_used = result.threads_used.max(threads);
            }
            // An exchange changes two partitions: both count against the cap.
            // Without a cap, every move fits and the touched set is not kept.
            let fits = |touched: &BTreeSet<u32>, a: Action| {
                max_partitions.is_none_or(|cap| {
                    let new = [Some(a.partition()), a.partner()]
                        .into_iter()
                        .flatten()
                        .filter(|pi| !touched.contains(pi))
                        .count();
                    touched.len() + new <= cap
                })
            };
            let has_cap = max_partitions.is_some();
            let had_any = !best.is_empty();
            let best: Vec<Scored> = best
                .into_iter()
                .filter(|s| fits(&touched, s.action))
                .collect();
            let Some(first) = best.first() else {
                if is_full || had_any {
                    result.capped = true;
                }
                stuck_set.insert((b, load));
                stuck.push((b, load, tally));
                continue;
            };
            if has_cap {
                touched.extend(
                    [Some(first.action.partition()), first.action.partner()]
                        .into_iter()
                        .flatten(),
                );
            }
            apply(&mut write(), first.action, load);
            result.applied += 1;
            // The runners-up were scored on the state before `first`: each is scored again and
            // applied only while it still helps.
            let mut moved: Vec<u32> = Vec::with_capacity(2 * BATCH);
            moved.extend(
                [Some(first.action.partition()), first.action.partner()]
                    .into_iter()
                    .flatten(),
            );
            for s in &best[1..] {
                let parts = [Some(s.action.partition()), s.action.partner()];
                let parts = parts.iter().flatten();
                let again = {
                    let guard = read(lock);
                    let v = View {
                        model: &guard,
                        targets,
                        typical_size,
                        mode,
                        step,
                    };
                    let value = v.model.loads[b as usize][load];
                    if targets.dev(load, value).abs() <= targets.threshold {
                        break;
                    }
                    if parts.clone().any(|pi| moved.contains(pi)) || !fits(&touched, s.action) {
                        continue;
                    }
                    v.evaluate(b, load, s.action, &mut Tally::default())
                };
                // Only runners-up nearly as good as the best: a penalised choice (over a spread
                // cap, a costly copy) waits for its own step.
                if again.is_some_and(|x| x.score >= 0.9 * first.score) {
                    if has_cap {
                        touched.extend(parts.clone().copied());
                    }
                    apply(&mut write(), s.action, load);
                    result.applied += 1;
                    moved.extend(parts.copied());
                }
            }
        }
        if result.applied == applied_before || result.iterations >= limit {
            break;
        }
    }
    // Only pairs still beyond the threshold are limits; a later move may have fixed one.
    let guard = read(lock);
    result.stuck = stuck
        .into_iter()
        .filter(|(b, l, _)| {
            let v = guard.loads[*b as usize][*l];
            targets.dev(*l, v).abs() > targets.threshold
        })
        .collect();
    result
}

/// Applies `action`, made for `load`, and records the goal on the partitions it changes first.
fn apply(model: &mut Model, action: Action, load: usize) {
    // A copy's goal replaces an earlier leadership change's: the move is made for it.
    let mut note = |pi: u32, why: Why| {
        let slot = &mut model.parts[pi as usize].why;
        let replace = matches!(
            (*slot, why),
            (None, _) | (Some(Why::Leadership(_)), Why::Load(_))
        ) || (matches!(why, Why::Exchange { .. }) && *slot != Some(Why::RackRepair));
        if replace {
            *slot = Some(why);
        }
    };
    let l = load as u8;
    match action {
        Action::Leader { pi, .. } => note(pi, Why::Leadership(l)),
        Action::LeaderPair { pi, qi, .. } => {
            note(pi, Why::Leadership(l));
            note(qi, Why::Leadership(l));
        }
        Action::Replica { pi, .. } => note(pi, Why::Load(l)),
        // Both halves of an exchange carry its one reason.
        Action::Exchange { pi, from, to, qi } => {
            note(
                pi,
                Why::Exchange {
                    load: l,
                    with: qi,
                    from,
                    to,
                },
            );
            note(
                qi,
                Why::Exchange {
                    load: l,
                    with: pi,
                    from: to,
                    to: from,
                },
            );
        }
    }
    match action {
        Action::Leader { pi, to } => model.apply_leader_swap(pi, to),
        Action::LeaderPair { pi, to, qi, qto } => {
            model.apply_leader_swap(pi, to);
            model.apply_leader_swap(qi, qto);
        }
        Action::Replica { pi, from, to } => model.apply_replica_move(pi, from, to),
        Action::Exchange { pi, from, to, qi } => {
            model.apply_replica_move(pi, from, to);
            model.apply_replica_move(qi, to, from);
        }
    }
}

/// The first ranked leadership changes of a split leadership step's chunks ([`Task::Leaders`])
/// in rank order (at most [`FIRST_WINDOW`]: as far as every chunk's sorted entries reach), and
/// how many each chunk gave: the others all rank after them. Rank order is a total order, so
/// this is the order one thread checks them in.
fn merge_ranked(chunks: &[Outcome]) -> (Vec<Ranked>, Vec<usize>) {
    let mut at = vec![0; chunks.len()];
    let mut first = Vec::with_capacity(FIRST_WINDOW);
    'merge: while first.len() < FIRST_WINDOW {
        let mut next: Option<(usize, &Ranked)> = None;
        for (i, c) in chunks.iter().enumerate() {
            if at[i] < c.sorted {
                let x = &c.ranked[at[i]];
                if next.is_none_or(|(_, y)| Ranked::order(x, y).is_lt()) {
                    next = Some((i, x));
                }
            } else if at[i] < c.ranked.len() {
                // This chunk's next entry is not known without sorting the rest of it.
                break 'merge;
            }
        }
        let Some((i, x)) = next else { break };
        first.push(*x);
        at[i] += 1;
    }
    (first, at)
}

/// What one step reads: the model as it is between moves.
struct View<'m> {
    model: &'m Model,
    targets: &'m Targets,
    typical_size: f64,
    mode: Mode,
    /// Varies which partitions a step samples.
    step: u64,
}

impl View<'_> {
    /// The eligible broker and active load farthest from fair share beyond the threshold.
    /// Overloaded brokers go first: a broker that gives load picks the cheapest destination
    /// (same rack) among equals; underloaded brokers pull only when nobody is over.
    fn worst(&self, stuck: &BTreeSet<(Bx, usize)>) -> Option<(Bx, usize)> {
        let t = self.targets;
        let mut over: Option<(f64, Bx, usize)> = None;
        let mut under: Option<(f64, Bx, usize)> = None;
        // A value this close to fair share is within the threshold whatever the rounding of
        // [`Targets::dev`] (the margin is far larger than it): skipped without dividing.
        let mut near = [-1.0; 7];
        for (l, n) in near.iter_mut().enumerate() {
            if t.fair[l] > 0.0 && t.threshold > 0.0 {
                *n = t.fair[l] * t.threshold / 100.0 * (1.0 - 1e-9);
            }
        }
        for (b, loads) in self.model.loads.iter().enumerate() {
            if !t.eligible[b] {
                continue;
            }
            for (l, v) in loads.iter().enumerate() {
                if !t.active[l] || (*v - t.fair[l]).abs() <= near[l] {
                    continue;
                }
                let d = t.dev(l, *v);
                let slot = if d > 0.0 { &mut over } else { &mut under };
                // The stuck pairs (a tree) are looked up last, for a pair that would be taken.
                if d.abs() > t.threshold
                    && slot.is_none_or(|(bd, _, _)| d.abs() > bd)
                    && !stuck.contains(&(b as Bx, l))
                {
                    *slot = Some((d.abs(), b as Bx, l));
                }
            }
        }
        over.or(under).map(|(_, b, l)| (b, l))
    }

    /// Brokers ordered by distance on `load`: most underloaded first (`ascending`) or most
    /// overloaded first; eligible only, `exclude` left out.
    fn ranked(&self, load: usize, ascending: bool, exclude: Bx) -> Vec<Bx> {
        let mut v: Vec<Bx> = (0..self.model.nb() as Bx)
            .filter(|&b| b != exclude && self.targets.eligible[b as usize])
            .collect();
        v.sort_unstable_by(|&a, &b| {
            let (la, lb) = (
                self.model.loads[a as usize][load],
                self.model.loads[b as usize][load],
            );
            let o = la.total_cmp(&lb);
            let o = if ascending { o } else { o.reverse() };
            o.then(a.cmp(&b))
        });
        v
    }

    /// Whether a replica of `pi` may go from `from` to `to`: rack spread and topic spread cap.
    fn replica_admissible(&self, pi: u32, from: Bx, to: Bx, tally: &mut Tally) -> bool {
        let m = self.model;
        let p = &m.parts[pi as usize];
        if p.holds(to) {
            return false;
        }
        let topic = p.topic as usize;
        let nb = m.nb();
        // Never make the topic's spread worse: going over the cap is allowed only from a
        // broker that is over it already (the topic's excess stays the same).
        let cap = m.replica_cap(topic, self.targets.eligible_count);
        if m.topic_replicas[topic * nb + to as usize] + 1 > cap
            && m.topic_replicas[topic * nb + from as usize] <= cap
        {
            tally.spread += 1;
            return false;
        }
        if !m.keeps_rack_spread(pi, from, to) {
            tally.rack += 1;
            return false;
        }
        true
    }

    /// Whether `action` leaves some topic with more replicas or more leaders beyond its caps,
    /// summed over brokers, than before: a replica move that also moves leadership (to the
    /// first replica of the new list), an exchange of two partitions of one topic that carries
    /// a leader across, a leadership change. Topic spread never gets worse.
    fn spreads_worse(&self, action: Action) -> bool {
        let m = self.model;
        let mut changes: [(u32, Bx, i32, i32); 8] = [(0, 0, 0, 0); 8];
        let mut n = 0;
        let mut add = |topic: u32, b: Bx, dr: i32, dl: i32| match changes[..n]
            .iter_mut()
            .find(|c| c.0 == topic && c.1 == b)
        {
            Some(c) => {
                c.2 += dr;
                c.3 += dl;
            }
            None => {
                changes[n] = (topic, b, dr, dl);
                n += 1;
            }
        };
        // A replica move of `pi` from `from` to `to`, or (`leader_only`) a leadership change
        // to `to`.
        let mut change = |pi: u32, from: Bx, to: Bx, leader_only: bool| {
            let p = &m.parts[pi as usize];
            if leader_only {
                if let Some(from) = p.leader {
                    add(p.topic, from, 0, -1);
                    add(p.topic, to, 0, 1);
                }
                return;
            }
            add(p.topic, from, -1, 0);
            add(p.topic, to, 1, 0);
            if p.leader == Some(from) {
                let next = if p.replicas.first() == Some(&from) {
                    to
                } else {
                    p.replicas[0]
                };
                add(p.topic, from, 0, -1);
                add(p.topic, next, 0, 1);
            }
        };
        match action {
            Action::Leader { pi, to } => change(pi, to, to, true),
            Action::LeaderPair { pi, to, qi, qto } => {
                change(pi, to, to, true);
                change(qi, qto, qto, true);
            }
            Action::Replica { pi, from, to } => change(pi, from, to, false),
            Action::Exchange { pi, from, to, qi } => {
                change(pi, from, to, false);
                change(qi, to, from, false);
            }
        }
        let nb = m.nb();
        let eligible = self.targets.eligible_count;
        let over = |c: u32, d: i32, cap: u32| {
            let after = (i64::from(c) + i64::from(d)).max(0);
            (after - i64::from(cap)).max(0) - (i64::from(c) - i64::from(cap)).max(0)
        };
        let mut per_topic: [(u32, i64, i64); 8] = [(0, 0, 0); 8];
        let mut topics = 0;
        for &(topic, b, dr, dl) in &changes[..n] {
            if !self.targets.eligible[b as usize] {
                continue;
            }
            let t = topic as usize;
            let at = t * nb + b as usize;
            // A count that does not change adds no excess: not read (the per-topic tables are
            // large, and a leadership change leaves every replica count as it is).
            let er = if dr == 0 {
                0
            } else {
                over(m.topic_replicas[at], dr, m.replica_cap(t, eligible))
            };
            let el = if dl == 0 {
                0
            } else {
                over(m.topic_leaders[at], dl, m.leader_cap(t, eligible))
            };
            match per_topic[..topics].iter_mut().find(|x| x.0 == topic) {
                Some(x) => {
                    x.1 += er;
                    x.2 += el;
                }
                None => {
                    per_topic[topics] = (topic, er, el);
                    topics += 1;
                }
            }
        }
        per_topic[..topics].iter().any(|x| x.1 > 0 || x.2 > 0)
    }

    /// Whether `to` may take leadership of `pi` without making the topic's leader spread worse.
    fn leader_admissible(&self, pi: u32, to: Bx, tally: &mut Tally) -> bool {
        let m = self.model;
        let p = &m.parts[pi as usize];
        let topic = p.topic as usize;
        let cap = m.leader_cap(topic, self.targets.eligible_count);
        let from_over = p
            .leader
            .is_some_and(|l| m.topic_leaders[topic * m.nb() + l as usize] > cap);
        let ok = m.topic_leaders[topic * m.nb() + to as usize] < cap || from_over;
        if !ok {
            tally.spread += 1;
        }
        ok
    }

    /// Loads the per-topic leader counts [`View::leader_admissible`] reads for the leadership
    /// changes of `window` (at most [`FIRST_WINDOW`] of them: the current leader's and the new
    /// one's, the entry's tag), in a tight loop of independent loads, so their cache misses
    /// overlap (the table is topics x brokers, read at random).
    fn warm_leader_counts(&self, window: &[Ranked]) {
        let m = self.model;
        let nb = m.nb();
        let mut touched = 0u32;
        for r in window.iter().take(FIRST_WINDOW) {
            let p = &m.parts[r.pi as usize];
            let row = p.topic as usize * nb;
            if let Some(l) = p.leader {
                touched ^= m.topic_leaders.get(row + l as usize).copied().unwrap_or(0);
            }
            touched ^= m
                .topic_leaders
                .get(row + r.tag as usize)
                .copied()
                .unwrap_or(0);
        }
        std::hint::black_box(touched);
    }

    /// Brokers to give to or take from: the [`FANOUT`] farthest on `load` overall plus the
    /// [`FANOUT`] farthest in `b`'s rack (same-rack copies are cheaper and keep rack spread).
    fn partners(&self, b: Bx, load: usize, ascending: bool) -> Vec<Bx> {
        let ranked = self.ranked(load, ascending, b);
        let rack = self.model.brokers[b as usize].rack;
        let mut out: Vec<Bx> = ranked.iter().copied().take(FANOUT).collect();
        if rack.is_some() {
            for &x in ranked
                .iter()
                .filter(|&&x| self.model.brokers[x as usize].rack == rack)
                .take(FANOUT)
            {
                if !out.contains(&x) {
                    out.push(x);
                }
            }
        }
        out
    }

    /// The leadership changes of partition `pi` that take `load` off `b` (`over`) or onto it,
    /// ranked by how close their share is to `ideal`: one per other in-sync replica when `b`
    /// leads it (over), or `b` taking it over when `b` follows in sync (under). Both the
    /// search on one thread and the chunks of a split step rank with this, so they rank alike.
    fn rank_swaps(
        &self,
        pi: u32,
        b: Bx,
        load: usize,
        over: bool,
        ideal: f64,
        swaps: &mut Vec<Ranked>,
    ) {
        let p = &self.model.parts[pi as usize];
        let Some(l) = p.leader else { return };
        let (lv, fv) = (p.leader_vec()[load], p.follower_vec()[load]);
        if over {
            if l == b && lv - fv > 0.0 {
                for &f in &p.isr {
                    if f != b && p.holds(f) && self.targets.eligible[f as usize] {
                        swaps.push(Ranked::new(lv - fv - ideal, pi, f));
                    }
                }
            } else if l != b && fv - lv > 0.0 && p.isr.contains(&b) {
                swaps.push(Ranked::new(fv - lv - ideal, pi, b));
            }
        } else {
            let gain = lv - fv;
            if l != b && p.isr.contains(&b) && gain > 0.0 {
                swaps.push(Ranked::new(gain - ideal, pi, b));
            }
        }
    }

    /// The candidate moves for broker `b` on `load`, in a fixed order. A cheap scan ranks
    /// partitions by how close their share of `load` is to the amount that should move; they
    /// are then checked in that order until [`SHORTLIST`] admissible ones are found, so a step
    /// costs about the same however many partitions a broker holds.
    /// With a pool, the exchanges between broker pairs are looked for on its threads; the
    /// candidates are the same in the same order however many threads there are. Returns the
    /// candidates and the threads used.
    fn candidates(
        &self,
        b: Bx,
        load: usize,
        tally: &mut Tally,
        pool: Option<&Pool>,
    ) -> (Vec<Action>, usize) {
        let m = self.model;
        let t = self.targets;
        let value = m.loads[b as usize][load];
        let fair = t.fair[load];
        let mut out = Vec::new();
        let mut threads = 1;
        // Leadership changes only: the copies' destinations and candidates are not looked for.
        let full = self.mode == Mode::Full;
        if t.dev(load, value) > 0.0 {
            let ideal = value - fair * (1.0 + AIM * t.threshold / 100.0);
            let mut moves: Vec<Ranked> = Vec::new();
            let mut swaps: Vec<Ranked> = Vec::new();
            for pi in warmed(m, sample(&m.broker_parts[b as usize], self.step)).iter() {
                let p = &m.parts[pi as usize];
                if p.leader.is_none() {
                    continue;
                }
                if full {
                    let (lv, fv) = (p.leader_vec()[load], p.follower_vec()[load]);
                    let own = if p.leader == Some(b) { lv } else { fv };
                    if own > 0.0 {
                        moves.push(Ranked::copy(own - ideal, p.size, pi, Bx::MAX));
                    }
                }
                self.rank_swaps(pi, b, load, true, ideal, &mut swaps);
            }
            for r in shortlist(
                swaps,
                SHORTLIST,
                |w| self.warm_leader_counts(w),
                |r| self.not_frozen(r.pi, tally) && self.leader_admissible(r.pi, r.tag, tally),
            ) {
                out.push(Action::Leader {
                    pi: r.pi,
                    to: r.tag,
                });
            }
            if !full {
                return (out, 1);
            }
            let dests = self.partners(b, load, true);
            // Most partitions may only move within their rack (they have one replica in every
            // rack), so the few that may leave it get a shortlist of their own: without it,
            // the destinations in other racks, often the farthest from fair share, would see
            // no candidate at all.
            let rack = m.brokers[b as usize].rack;
            let away: Vec<Bx> = dests
                .iter()
                .copied()
                .filter(|&d| rack.is_some() && m.brokers[d as usize].rack != rack)
                .collect();
            let listed = shortlist(
                moves.clone(),
                SHORTLIST,
                |_| {},
                |r| {
                    self.not_frozen(r.pi, tally)
                        && dests
                            .iter()
                            .any(|&d| self.replica_admissible(r.pi, b, d, tally))
                },
            );
            let crossing = if away.is_empty() {
                Vec::new()
            } else {
                let mut quiet = Tally::default();
                // Every partition of `b` that may leave its rack, not only the sampled ones:
                // there are few of them, but finding them reads all of `b`'s partitions, so
                // the scan is split over the threads (in consecutive ranges, put back in order).
                let all = m.broker_parts[b as usize].len();
                let chunks = pool.map_or(1, |p| p.threads_for_scan(all));
                let movable: Vec<Ranked> = match pool.filter(|_| chunks > 1) {
                    None => self.movable(b, load, ideal, &m.broker_parts[b as usize]),
                    Some(pool) => {
                        threads = threads.max(chunks);
                        let job = Job {
                            step: self.step,
                            b,
                            load,
                            items: all,
                            task: Task::Movable { ideal },
                            chunks,
                        };
                        self.ranked_on(pool, job)
                    }
                };
                let mut c = shortlist(
                    movable,
                    SHORTLIST,
                    |_| {},
                    |r| {
                        !listed.iter().any(|x| x.pi == r.pi)
                            && !m.parts[r.pi as usize].frozen
                            && away
                                .iter()
                                .any(|&d| self.replica_admissible(r.pi, b, d, &mut quiet))
                    },
                );
                c.truncate(CROSSING);
                c
            };
            for (r, to) in listed
                .iter()
                .map(|r| (r, &dests))
                .chain(crossing.iter().map(|r| (r, &away)))
            {
                for &d in to {
                    if self.replica_admissible(r.pi, b, d, &mut Tally::default()) {
                        out.push(Action::Replica {
                            pi: r.pi,
                            from: b,
                            to: d,
                        });
                    }
                }
            }
            if load == DISK && !self.counts_beyond(b, 1.0) {
                let pairs: Vec<(Bx, Bx)> = dests.iter().map(|&d| (b, d)).collect();
                threads = threads.max(self.all_exchanges(pairs, ideal, pool, &mut out, tally));
            }
        } else {
            let ideal = fair * (1.0 - AIM * t.threshold / 100.0) - value;
            let mut swaps: Vec<Ranked> = Vec::new();
            for pi in warmed(m, sample(&m.broker_parts[b as usize], self.step)).iter() {
                self.rank_swaps(pi, b, load, false, ideal, &mut swaps);
            }
            for r in shortlist(
                swaps,
                SHORTLIST,
                |w| self.warm_leader_counts(w),
                |r| self.not_frozen(r.pi, tally) && self.leader_admissible(r.pi, b, tally),
            ) {
                out.push(Action::Leader { pi: r.pi, to: b });
            }
            if !full {
                return (out, 1);
            }
            let sources = self.partners(b, load, false);
            // The sources' sampled partitions, source by source: split over the threads in
            // consecutive ranges of sources, put back in order.
            let chunks = pool.map_or(1, |p| p.threads_for_sources(sources.len()));
            let pulls: Vec<Ranked> = match pool.filter(|_| chunks > 1) {
                None => self.pulls(b, load, ideal, &sources, 0..sources.len()),
                Some(pool) => {
                    threads = threads.max(chunks);
                    let job = Job {
                        step: self.step,
                        b,
                        load,
                        items: sources.len(),
                        task: Task::Pulls {
                            ideal,
                            sources: sources.clone(),
                        },
                        chunks,
                    };
                    self.ranked_on(pool, job)
                }
            };
            for r in shortlist(
                pulls,
                SHORTLIST,
                |_| {},
                |r| self.not_frozen(r.pi, tally) && self.replica_admissible(r.pi, r.tag, b, tally),
            ) {
                out.push(Action::Replica {
                    pi: r.pi,
                    from: r.tag,
                    to: b,
                });
            }
            if load == DISK && !self.counts_beyond(b, -1.0) {
                let pairs: Vec<(Bx, Bx)> = sources.iter().map(|&s| (s, b)).collect();
                threads = threads.max(self.all_exchanges(pairs, ideal, pool, &mut out, tally));
            }
        }
        (out, threads)
    }

    /// The exchanges between each (giving, taking) pair of `pairs`, appended to `out` pair by
    /// pair in order; split over the pool's threads when there is one. Returns the threads used.
    fn all_exchanges(
        &self,
        pairs: Vec<(Bx, Bx)>,
        ideal: f64,
        pool: Option<&Pool>,
        out: &mut Vec<Action>,
        tally: &mut Tally,
    ) -> usize {
        let threads = pool.map_or(1, |p| p.threads_for_pairs(pairs.len()));
        let Some(pool) = pool.filter(|_| threads > 1) else {
            for &(hi, lo) in &pairs {
                self.exchanges(hi, lo, ideal, out, tally);
            }
            return 1;
        };
        // A pair a chunk: pairs' searches differ in length (one with nothing to move returns at
        // once), so consecutive ranges would leave a thread waiting.
        let job = Job {
            step: self.step,
            b: 0,
            load: DISK,
            items: pairs.len(),
            chunks: pairs.len(),
            task: Task::Exchanges(pairs, ideal),
        };
        for chunk in pool.split(job, |job, i| self.run_chunk(job, i)) {
            tally.merge(&chunk.tally);
            out.extend(chunk.found);
        }
        threads
    }

    /// [`View::exchanges`] for each pair, in order.
    fn exchange_chunk(&self, pairs: &[(Bx, Bx)], ideal: f64) -> Outcome {
        let mut out = Outcome::default();
        for &(hi, lo) in pairs {
            self.exchanges(hi, lo, ideal, &mut out.found, &mut out.tally);
        }
        out
    }

    /// Chunk `i` of `job`, on whichever thread claimed it.
    fn run_chunk(&self, job: &Job, i: usize) -> Outcome {
        match &job.task {
            Task::Evaluate(actions) => self.evaluate_chunk(job.b, job.load, &actions[job.range(i)]),
            Task::Exchanges(pairs, ideal) => self.exchange_chunk(&pairs[job.range(i)], *ideal),
            Task::Leaders { ideal, over } => {
                self.leader_chunk(job.b, job.load, (*ideal, *over), i, job.chunks)
            }
            Task::Check(ranked) => self.check_chunk(job.b, job.load, &ranked[job.range(i)]),
            Task::Pulls { ideal, sources } => Outcome {
                ranked: self.pulls(job.b, job.load, *ideal, sources, job.range(i)),
                ..Outcome::default()
            },
            Task::Movable { ideal } => Outcome {
                ranked: self.movable(
                    job.b,
                    job.load,
                    *ideal,
                    &self.model.broker_parts[job.b as usize][job.range(i)],
                ),
                ..Outcome::default()
            },
            // Done by the rack repairs' own pool, never posted by a search.
            Task::Repair { .. } => Outcome::default(),
        }
    }

    /// A split step's ranked candidates ([`Task::Movable`], [`Task::Pulls`]), chunk by chunk in
    /// order: what one thread ranks over the whole.
    fn ranked_on(&self, pool: &Pool, job: Job) -> Vec<Ranked> {
        let mut out = Vec::new();
        for chunk in pool.split(job, |job, i| self.run_chunk(job, i)) {
            out.extend(chunk.ranked);
        }
        out
    }

    /// The copies `b` (below fair share on `load`) could take from `sources[range]`, source by
    /// source: the sampled partitions of each that `b` does not hold, ranked by how close the
    /// source's share of `load` in them is to `ideal`. The sample per source depends on how many
    /// sources the step has, not on the range.
    fn pulls(
        &self,
        b: Bx,
        load: usize,
        ideal: f64,
        sources: &[Bx],
        range: Range<usize>,
    ) -> Vec<Ranked> {
        let m = self.model;
        let per_source = (SAMPLE / sources.len().max(1)).max(64);
        let mut out = Vec::new();
        for &s in &sources[range] {
            let sampled = warmed(
                m,
                sample(&m.broker_parts[s as usize], self.step ^ u64::from(s)).take(per_source),
            );
            for pi in sampled.iter() {
                let p = &m.parts[pi as usize];
                if p.leader.is_none() || p.holds(b) {
                    continue;
                }
                let own = p.share(s, load);
                if own > 0.0 {
                    out.push(Ranked::copy(own - ideal, p.size, pi, s));
                }
            }
        }
        out
    }

    /// Those of `pis` (partitions `b` holds) that may leave their rack, in order, ranked by how
    /// close `b`'s share of `load` in them is to `ideal`: two replicas share a rack (one may
    /// leave it), or a rack lacks one (a replica may go there).
    fn movable(&self, b: Bx, load: usize, ideal: f64, pis: &[u32]) -> Vec<Ranked> {
        let m = self.model;
        let racks = m.rack_names.len();
        pis.iter()
            .copied()
            .filter(|&pi| {
                let p = &m.parts[pi as usize];
                p.leader.is_some() && {
                    let spread = m.rack_spread(p.replicas.as_slice());
                    spread < p.replicas.len() || spread < racks
                }
            })
            .map(|pi| {
                let p = &m.parts[pi as usize];
                Ranked::copy(p.share(b, load) - ideal, p.size, pi, Bx::MAX)
            })
            .filter(|r| r.closeness.is_finite())
            .collect()
    }

    /// Whether `b` is beyond the threshold on leader or follower count in the direction `sign`
    /// (1: over, -1: under) while those counts are evened: an exchange keeps both counts, so a
    /// plain copy, which moves disk and the count together, serves better, and exchanges are
    /// not looked for.
    fn counts_beyond(&self, b: Bx, sign: f64) -> bool {
        let t = self.targets;
        [0, 1]
            .into_iter()
            .any(|l| t.active[l] && sign * t.dev(l, self.model.loads[b as usize][l]) > t.threshold)
    }

    /// Whether `pi`'s replica on `b` would keep its role if it moved: a follower, or the leader
    /// in the preferred position (leadership moves with it).
    fn keeps_role(&self, pi: u32, b: Bx) -> bool {
        let p = &self.model.parts[pi as usize];
        p.leader.is_some() && (p.leader != Some(b) || p.replicas.first() == Some(&b))
    }

    /// Whether `pi` may go `from` → `to` while `qi` goes `to` → `from`: both unfrozen and
    /// keeping their roles, rack spread kept for both, and the topic spread cap (partitions of
    /// one topic leave its counts as they are).
    fn exchange_admissible(&self, pi: u32, from: Bx, to: Bx, qi: u32, tally: &mut Tally) -> bool {
        let m = self.model;
        let (p, q) = (&m.parts[pi as usize], &m.parts[qi as usize]);
        if pi == qi || !p.holds(from) || p.holds(to) || !q.holds(to) || q.holds(from) {
            return false;
        }
        if p.frozen || q.frozen {
            tally.cooldown += 1;
            return false;
        }
        if !self.keeps_role(pi, from) || !self.keeps_role(qi, to) {
            return false;
        }
        if p.topic != q.topic {
            return self.replica_admissible(pi, from, to, tally)
                && self.replica_admissible(qi, to, from, tally);
        }
        if !m.keeps_rack_spread(pi, from, to) || !m.keeps_rack_spread(qi, to, from) {
            tally.rack += 1;
            return false;
        }
        true
    }

    /// Replica exchanges that move disk from `hi` to `lo` without changing either broker's
    /// replica or leader counts: a large replica of `hi` goes to `lo`, a small one of `lo` comes
    /// back, the difference as close as possible to what should move (at most `ideal`, and at
    /// most half the gap between the two). At most [`EXCHANGES`] per broker pair, in a fixed
    /// order.
    fn exchanges(&self, hi: Bx, lo: Bx, ideal: f64, out: &mut Vec<Action>, tally: &mut Tally) {
        let m = self.model;
        let gap = (m.loads[hi as usize][DISK] - m.loads[lo as usize][DISK]) / 2.0;
        let want = ideal.min(gap);
        if want <= 0.0 {
            return;
        }
        let usable = |pi: u32, at: Bx, other: Bx| {
            let p = &m.parts[pi as usize];
            !p.frozen && !p.holds(other) && self.keeps_role(pi, at)
        };
        let salt = self.step ^ (u64::from(hi) << 20) ^ u64::from(lo);
        let mut give: Vec<(f64, u32)> = warmed(m, sample(&m.broker_parts[hi as usize], salt))
            .iter()
            .filter(|&pi| usable(pi, hi, lo))
            .map(|pi| (m.parts[pi as usize].size, pi))
            .collect();
        let mut take: Vec<(f64, u32)> =
            warmed(m, sample(&m.broker_parts[lo as usize], salt.rotate_left(9)))
                .iter()
                .filter(|&pi| usable(pi, lo, hi))
                .map(|pi| (m.parts[pi as usize].size, pi))
                .collect();
        if give.is_empty() || take.is_empty() {
            return;
        }
        let by_size = |a: &(f64, u32), b: &(f64, u32)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
        give.sort_unstable_by(by_size);
        give.dedup_by_key(|x| x.1);
        take.sort_unstable_by(by_size);
        take.dedup_by_key(|x| x.1);
        // For each large replica, the small ones whose difference is nearest `want` from below
        // (no overshoot) and from above; pairs ranked by how far the difference is from `want`,
        // then by the bytes they copy.
        let mut pairs: Vec<(f64, f64, u32, u32)> = Vec::new();
        // Misses are compared in steps of 5% of what one exchange can move at most, so a want
        // larger than any partition still ranks the pairs that move the most first.
        let largest = give.last().map_or(0.0, |x| x.0);
        let bucket = (want.min(largest) / 20.0).max(1.0);
        for &(ps, pi) in &give {
            let target = ps - want;
            let at = take.partition_point(|&(qs, _)| qs < target);
            let lo_i = at.saturating_sub(2);
            let hi_i = (at + 2).min(take.len());
            for &(qs, qi) in take[lo_i..hi_i].iter().chain(take.iter().take(2)) {
                if qs >= ps {
                    continue;
                }
                // Misses within 5% of `want` of each other rank by bytes.
                let miss = ((ps - qs - want).abs() / bucket).floor();
                pairs.push((miss, ps + qs, pi, qi));
            }
        }
        pairs.sort_unstable_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then(a.1.total_cmp(&b.1))
                .then(a.2.cmp(&b.2))
                .then(a.3.cmp(&b.3))
        });
        pairs.dedup_by_key(|x| (x.2, x.3));
        let mut found = 0;
        for (_, _, pi, qi) in pairs {
            if found == EXCHANGES {
                break;
            }
            if self.exchange_admissible(pi, hi, lo, qi, tally) {
                out.push(Action::Exchange {
                    pi,
                    from: hi,
                    to: lo,
                    qi,
                });
                found += 1;
            }
        }
    }

    fn not_frozen(&self, pi: u32, tally: &mut Tally) -> bool {
        let frozen = self.model.parts[pi as usize].frozen;
        tally.cooldown += u32::from(frozen);
        !frozen
    }

    /// A leadership step's scored candidates and tally, found in chunks on the pool's threads:
    /// the sampled partitions' changes ranked in chunks ([`View::leader_chunk`]) and merged in
    /// rank order ([`merge_ranked`]), the first of them checked and scored in chunks
    /// ([`View::check_chunk`]), and taken in rank order until [`SHORTLIST`] passed; what is
    /// still missing then is looked for on this thread. What one thread finds
    /// ([`View::candidates`] and the scoring in [`View::best_moves`]): every check and score is a
    /// function of the model alone, the tally counts the same changes, and the scored are ranked
    /// with a total order. `None` when the step is not split (not a leadership search, a
    /// partition cap, too few partitions or threads).
    fn split_leaders(
        &self,
        b: Bx,
        load: usize,
        only: Option<&BTreeSet<u32>>,
        pool: &Pool,
    ) -> Option<(Vec<Scored>, Tally, usize)> {
        if self.mode != Mode::Leadership || only.is_some() {
            return None;
        }
        let m = self.model;
        let chunks = pool.threads_for_leaders(m.broker_parts[b as usize].len().min(SAMPLE));
        if chunks < 2 {
            return None;
        }
        // As in [`View::candidates`].
        let t = self.targets;
        let (value, fair) = (m.loads[b as usize][load], t.fair[load]);
        let over = t.dev(load, value) > 0.0;
        let ideal = if over {
            value - fair * (1.0 + AIM * t.threshold / 100.0)
        } else {
            fair * (1.0 - AIM * t.threshold / 100.0) - value
        };
        let job = Job {
            step: self.step,
            b,
            load,
            task: Task::Leaders { ideal, over },
            items: SAMPLE,
            chunks,
        };
        let ranked = pool.split(job, |job, i| self.run_chunk(job, i));
        let (mut first, taken) = merge_ranked(&ranked);
        // Most changes pass their check (about 45 of the first 48 on `leaders`): a few more
        // than a shortlist are checked and scored on the threads, and the rest of the first,
        // then the others, here when too few passed.
        let tail = first.split_off(first.len().min(LEADER_CHECKED));
        let job = Job {
            step: self.step,
            b,
            load,
            items: first.len(),
            chunks: if first.len() >= chunks * LEADER_SCORES {
                chunks
            } else {
                1
            },
            task: Task::Check(first),
        };
        let mut found = Vec::with_capacity(SHORTLIST);
        let mut tally = Tally::default();
        let mut passed = 0;
        'taken: for chunk in pool.split(job, |job, i| self.run_chunk(job, i)) {
            for c in chunk.checked {
                if passed == SHORTLIST {
                    break 'taken;
                }
                tally.merge(&c.tally);
                if c.passed {
                    passed += 1;
                    found.extend(c.scored);
                }
            }
        }
        let check = |r: &Ranked, tally: &mut Tally| {
            self.not_frozen(r.pi, tally) && self.leader_admissible(r.pi, r.tag, tally)
        };
        let score = |r: &Ranked, tally: &mut Tally, found: &mut Vec<Scored>| {
            let action = Action::Leader {
                pi: r.pi,
                to: r.tag,
            };
            tally.evaluated += 1;
            found.extend(self.evaluate(b, load, action, tally));
        };
        if passed < SHORTLIST && !tail.is_empty() {
            self.warm_leader_counts(&tail);
            for r in &tail {
                if passed == SHORTLIST {
                    break;
                }
                if check(r, &mut tally) {
                    passed += 1;
                    score(r, &mut tally, &mut found);
                }
            }
        }
        let rest = || {
            let mut rest = Vec::new();
            for (c, &at) in ranked.iter().zip(&taken) {
                rest.extend_from_slice(&c.ranked[at..]);
            }
            rest
        };
        if passed < SHORTLIST
            && ranked
                .iter()
                .zip(&taken)
                .any(|(c, &at)| at < c.ranked.len())
        {
            // Fewer than a shortlist passed among the first: the rest, in rank order, here.
            for r in shortlist(
                rest(),
                SHORTLIST - passed,
                |w| self.warm_leader_counts(w),
                |r| check(r, &mut tally),
            ) {
                score(&r, &mut tally, &mut found);
            }
        }
        Some((found, tally, chunks))
    }

    /// The admissible candidates for (b, load), best first (at most [`BATCH`]), or why there
    /// are none; and how many threads evaluated them.
    fn best_moves(
        &self,
        b: Bx,
        load: usize,
        only: Option<&BTreeSet<u32>>,
        pool: &Pool,
    ) -> (Vec<Scored>, Tally, usize) {
        let (found, tally, threads) = match self.split_leaders(b, load, only, pool) {
            Some(split) => split,
            None => {
                let mut scan = Tally::default();
                let (mut actions, scan_threads) = self.candidates(b, load, &mut scan, Some(pool));
                if let Some(only) = only {
                    actions.retain(|a| only.contains(&a.partition()));
                }
                let (chunks, threads) = pool.evaluate((self.step, b, load), actions, |job, i| {
                    self.run_chunk(job, i)
                });
                let mut found = Vec::new();
                let mut tally = scan;
                for chunk in chunks {
                    tally.merge(&chunk.tally);
                    found.extend(chunk.scored);
                }
                (found, tally, threads.max(scan_threads))
            }
        };
        let (mut found, mut tally) = (found, tally);
        if found.is_empty() && self.mode == Mode::Full {
            // No single move helps: two leadership changes that keep a third broker's leader
            // count. Looked for on this thread only (rare), so any worker count finds the same;
            // and only in the search that may also copy: tried in the leadership-only search
            // too, they left a hot broker's disk beyond the threshold (`hot-broker` 24x2400
            // seed 8: +8.4%).
            let mut pairs = self.leader_pairs(b, load, &mut tally);
            if let Some(only) = only {
                pairs.retain(|a| {
                    only.contains(&a.partition()) && a.partner().is_none_or(|q| only.contains(&q))
                });
            }
            let more = self.evaluate_chunk(b, load, &pairs);
            tally.merge(&more.tally);
            found = more.scored;
        }
        let order = |a: &Scored, b: &Scored| {
            if better(a, b) {
                std::cmp::Ordering::Less
            } else if better(b, a) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        };
        // Only the first [`BATCH`] are kept: they are chosen, then sorted (`better` is a total
        // order, so they are the first of a full sort, in its order).
        if found.len() > BATCH {
            found.select_nth_unstable_by(BATCH - 1, order);
            found.truncate(BATCH);
        }
        found.sort_unstable_by(order);
        (found, tally, threads)
    }

    /// Pairs of leadership changes for `b` on `load` ([`Action::LeaderPair`]): the first
    /// [`PAIR_FIRST`] admissible leadership changes that move `load` the right way for `b`
    /// (ranked as a step ranks them), each with every leadership change that gives the third
    /// broker back its leader count, among [`SAMPLE`] of that broker's partitions: it passes
    /// on a partition it leads (when the first change gave it one) or takes over one it follows
    /// in sync (when the first took one from it), each to or from any other in-sync replica.
    fn leader_pairs(&self, b: Bx, load: usize, tally: &mut Tally) -> Vec<Action> {
        let m = self.model;
        let t = self.targets;
        let value = m.loads[b as usize][load];
        let over = t.dev(load, value) > 0.0;
        let fair = t.fair[load];
        let ideal = if over {
            value - fair * (1.0 + AIM * t.threshold / 100.0)
        } else {
            fair * (1.0 - AIM * t.threshold / 100.0) - value
        };
        let mut swaps: Vec<Ranked> = Vec::new();
        for pi in warmed(m, sample(&m.broker_parts[b as usize], self.step)).iter() {
            self.rank_swaps(pi, b, load, over, ideal, &mut swaps);
        }
        swaps.sort_unstable_by(Ranked::order);
        let mut out = Vec::new();
        let mut firsts = 0;
        for r in &swaps {
            if firsts == PAIR_FIRST {
                break;
            }
            let p = &m.parts[r.pi as usize];
            let Some(leader) = p.leader else { continue };
            if !self.not_frozen(r.pi, tally) || !self.leader_admissible(r.pi, r.tag, tally) {
                continue;
            }
            firsts += 1;
            // The broker whose leader count the first change moves besides `b`'s, and whether
            // it gained a leadership.
            let (third, gained) = if r.tag == b {
                (leader, false)
            } else {
                (r.tag, true)
            };
            let salt = self.step ^ (u64::from(r.pi) << 20);
            for qi in sample(&m.broker_parts[third as usize], salt) {
                if qi == r.pi {
                    continue;
                }
                let q = &m.parts[qi as usize];
                let Some(ql) = q.leader else { continue };
                if gained {
                    if ql != third {
                        continue;
                    }
                    for &z in &q.isr {
                        if z != third && q.holds(z) && t.eligible[z as usize] {
                            out.push(Action::LeaderPair {
                                pi: r.pi,
                                to: r.tag,
                                qi,
                                qto: z,
                            });
                        }
                    }
                } else if ql != third && q.isr.contains(&third) && t.eligible[ql as usize] {
                    out.push(Action::LeaderPair {
                        pi: r.pi,
                        to: r.tag,
                        qi,
                        qto: third,
                    });
                }
            }
        }
        out
    }

    fn evaluate_chunk(&self, b: Bx, load: usize, actions: &[Action]) -> Outcome {
        let mut out = Outcome::default();
        for &a in actions {
            out.tally.evaluated += 1;
            if let Some(s) = self.evaluate(b, load, a, &mut out.tally) {
                out.scored.push(s);
            }
        }
        out
    }

    /// Chunk `chunk` of `chunks` of a split leadership step's ranking ([`Task::Leaders`]) for
    /// `b` on `load`: every `chunks`-th sampled partition from the `chunk`-th, its leadership
    /// changes ranked as on one thread ([`View::rank_swaps`]), the first [`FIRST_WINDOW`] of
    /// them sorted (all the merge can take from one chunk).
    fn leader_chunk(
        &self,
        b: Bx,
        load: usize,
        (ideal, over): (f64, bool),
        chunk: usize,
        chunks: usize,
    ) -> Outcome {
        let m = self.model;
        let sampled = warmed(
            m,
            sample(&m.broker_parts[b as usize], self.step)
                .skip(chunk)
                .step_by(chunks.max(1)),
        );
        // Two changes a partition at most with three replicas: no growing.
        let mut ranked = Vec::with_capacity(2 * sampled.len);
        for pi in sampled.iter() {
            self.rank_swaps(pi, b, load, over, ideal, &mut ranked);
        }
        let sorted = ranked
            .len()
            .min(SHORTLIST.div_ceil(chunks.max(1)) + LEADER_SORTED);
        if sorted > 0 && sorted < ranked.len() {
            ranked.select_nth_unstable_by(sorted - 1, Ranked::order);
        }
        ranked[..sorted].sort_unstable_by(Ranked::order);
        Outcome {
            ranked,
            sorted,
            ..Outcome::default()
        }
    }

    /// The shortlist's check of each of `ranked` (leadership changes), and the score of those
    /// that pass ([`Task::Check`]).
    fn check_chunk(&self, b: Bx, load: usize, ranked: &[Ranked]) -> Outcome {
        self.warm_leader_counts(ranked);
        let mut out = Outcome::default();
        for r in ranked {
            let mut tally = Tally::default();
            let passed = self.not_frozen(r.pi, &mut tally)
                && self.leader_admissible(r.pi, r.tag, &mut tally);
            let scored = if passed {
                tally.evaluated += 1;
                let action = Action::Leader {
                    pi: r.pi,
                    to: r.tag,
                };
                self.evaluate(b, load, action, &mut tally)
            } else {
                None
            };
            out.checked.push(Checked {
                tally,
                passed,
                scored,
            });
        }
        out
    }

    /// Scores one candidate; `None` (with the reason tallied) when it is not admissible.
    fn evaluate(&self, b: Bx, load: usize, action: Action, tally: &mut Tally) -> Option<Scored> {
        let m = self.model;
        let t = self.targets;
        let e = effect(m, action);
        // The move must bring broker b closer to fair share on this load.
        let before = m.loads[b as usize][load];
        let after = before + e.delta(b, load);
        let (db, da) = (t.dev(load, before).abs(), t.dev(load, after).abs());
        if da >= db - 1e-9 {
            tally.overshoot += u32::from(e.delta(b, load) != 0.0);
            return None;
        }
        let pi = action.partition();
        let p = &m.parts[pi as usize];
        if p.frozen
            || action
                .partner()
                .is_some_and(|qi| m.parts[qi as usize].frozen)
        {
            tally.cooldown += 1;
            return None;
        }
        let admissible = match action {
            Action::Replica { pi, from, to } => self.replica_admissible(pi, from, to, tally),
            Action::Leader { pi, to } => self.leader_admissible(pi, to, tally),
            Action::LeaderPair { pi, to, qi, qto } => {
                self.leader_admissible(pi, to, tally) && self.leader_admissible(qi, qto, tally)
            }
            Action::Exchange { pi, from, to, qi } => {
                self.exchange_admissible(pi, from, to, qi, tally)
            }
        };
        if !admissible {
            return None;
        }
        // Objective: [`objective`] of every counted load on every eligible broker.
        let band = AIM * t.threshold / 100.0;
        let mut delta_obj = 0.0;
        let mut worsened_sibling = false;
        for &(x, ref dv) in &e.items[..e.len] {
            if !t.eligible[x as usize] {
                continue;
            }
            for (l, &dl) in dv.iter().enumerate() {
                if dl == 0.0 {
                    continue;
                }
                let v = m.loads[x as usize][l];
                // A load below its floor is left alone, but never pushed beyond the trigger
                // (or farther beyond it): a load within 10% before stays within 10%.
                if t.floor[l].is_some() {
                    let (d0, d1) = (t.dev(l, v), t.dev(l, v + dl));
                    if d1.abs() > t.trigger && d1.abs() > d0.abs() {
                        tally.conflict += 1;
                        return None;
                    }
                }
                if !t.counted[l] {
                    continue;
                }
                if t.kept[l] {
                    let (d0, d1) = (t.dev(l, v), t.dev(l, v + dl));
                    if d1.abs() > t.trigger && d1.abs() > d0.abs() {
                        tally.conflict += 1;
                        return None;
                    }
                }
                let (d0, d1) = (t.dev(l, v) / 100.0, t.dev(l, v + dl) / 100.0);
                delta_obj += objective(d1, band) - objective(d0, band);
                // A load that did not trigger is not pushed past the threshold (or past where it
                // already is): balancing one load must not unbalance another.
                if !t.active[l] && d1.abs() * 100.0 > t.threshold && d1.abs() > d0.abs() {
                    tally.conflict += 1;
                    return None;
                }
                if l != load && d1.abs() > d0.abs() {
                    worsened_sibling = true;
                }
            }
        }
        if delta_obj >= -1e-12 {
            if worsened_sibling {
                tally.conflict += 1;
            } else {
                tally.overshoot += 1;
            }
            return None;
        }
        // Checked last, on the few candidates that help (most do not). A replica of a
        // partition on too few racks moves only onto a rack it lacks: the move
        // repairs it (or brings it closer), and never leaves it where it was.
        let widens = |pi: u32, from: Bx, to: Bx| {
            let p = &m.parts[pi as usize];
            if !m.too_few_racks(p.replicas.as_slice()) {
                return true;
            }
            let mut moved = p.replicas;
            if let Some(at) = moved.position(from) {
                moved.set(at, to);
            }
            m.rack_spread(moved.as_slice()) > m.rack_spread(p.replicas.as_slice())
        };
        let widened = match action {
            Action::Leader { .. } | Action::LeaderPair { .. } => true,
            Action::Replica { pi, from, to } => widens(pi, from, to),
            Action::Exchange { pi, from, to, qi } => widens(pi, from, to) && widens(qi, to, from),
        };
        if !widened {
            tally.rack += 1;
            return None;
        }
        if self.spreads_worse(action) {
            tally.spread += 1;
            return None;
        }
        let copy = |pi: u32, from: Bx, to: Bx| {
            let size = m.parts[pi as usize].size;
            let cross = match (m.brokers[from as usize].rack, m.brokers[to as usize].rack) {
                (Some(a), Some(b)) => a != b,
                _ => false,
            };
            let copy = 1.0 + size / self.typical_size.max(1.0);
            if cross {
                CROSS_RACK * copy + 0.5
            } else {
                copy + 0.5
            }
        };
        let cost = match action {
            Action::Leader { .. } => 1.0,
            Action::LeaderPair { .. } => 2.0,
            Action::Replica { pi, from, to } => copy(pi, from, to),
            Action::Exchange { pi, from, to, qi } => copy(pi, from, to) + copy(qi, to, from),
        };
        // A destination that goes over its topic's spread cap (allowed only when the source is
        // over it too) is a last resort.
        let nb = m.nb();
        let over = |pi: u32, to: Bx| {
            let topic = m.parts[pi as usize].topic as usize;
            m.topic_replicas[topic * nb + to as usize] + 1 > m.replica_cap(topic, t.eligible_count)
        };
        let over_cap = match action {
            Action::Replica { pi, to, .. } => over(pi, to),
            Action::Leader { to, .. } => {
                let topic = p.topic as usize;
                m.topic_leaders[topic * nb + to as usize] + 1
                    > m.leader_cap(topic, t.eligible_count)
            }
            Action::LeaderPair { pi, to, qi, qto } => {
                [(pi, to), (qi, qto)].iter().any(|&(x, d)| {
                    let topic = m.parts[x as usize].topic as usize;
                    m.topic_leaders[topic * nb + d as usize] + 1
                        > m.leader_cap(topic, t.eligible_count)
                })
            }
            Action::Exchange { pi, from, to, qi } => {
                m.parts[qi as usize].topic != p.topic && (over(pi, to) || over(qi, from))
            }
        };
        let cost = if over_cap { cost * 4.0 } else { cost };
        Some(Scored {
            action,
            score: -delta_obj / cost,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_model::snapshot::{Snapshot, SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
    use ballast_model::BrokerState;

    use crate::fixtures::{cluster, partition};
    use crate::model::Effect;

    #[test]
    fn a_leadership_changes_effect_is_that_of_the_four_adds_bit_for_bit() {
        let snapshot = cluster(2, vec![partition("t", 0, &[1, 2], 7_000_001)]);
        let mut m = Model::build(&snapshot, 0, 0);
        let to = m.parts[0].replicas[1];
        for rates in [
            [0.1, 1e300, 0.0, -0.0],
            [3.0, 0.3, f64::MIN_POSITIVE, 1.0 / 3.0],
        ] {
            m.parts[0].rates = rates;
            let p = &m.parts[0];
            let Some(from) = p.leader else {
                panic!("the fixture's partition has a leader")
            };
            let mut four = Effect::new();
            four.add(from, p.leader_vec(), -1.0);
            four.add(from, p.follower_vec(), 1.0);
            four.add(to, p.follower_vec(), -1.0);
            four.add(to, p.leader_vec(), 1.0);
            let e = effect(&m, Action::Leader { pi: 0, to });
            assert_eq!(e.len, four.len);
            for (a, b) in e.items[..e.len].iter().zip(&four.items[..four.len]) {
                assert_eq!(a.0, b.0);
                assert_eq!(a.1.map(f64::to_bits), b.1.map(f64::to_bits));
            }
        }
    }

    #[test]
    fn exchanges_are_not_looked_for_while_the_broker_is_beyond_the_threshold_on_a_count() {
        // Brokers 1-3 lead 30 partitions of 10 MB each, broker 4 leads 5 of 1 MB (RF 1, one
        // topic per partition): broker 4 is under on disk and on leader count. A copy to it
        // evens both; an exchange would keep its count where it is.
        let mut partitions = Vec::new();
        for b in 1..=4 {
            let (count, size) = if b == 4 {
                (5, 1_000_000)
            } else {
                (30, 10_000_000)
            };
            for i in 0..count {
                partitions.push(partition(&format!("t{b}-{i:02}"), 0, &[b], size));
            }
        }
        let snapshot = cluster(4, partitions);
        let m = Model::build(&snapshot, 0, 0);
        let total = m.load_totals();
        let fair = total.map(|sum| sum / 4.0);
        let placement = [true, true, true, false, false, false, false];
        let mut t = Targets {
            fair,
            total,
            counted: placement,
            active: placement,
            floor: [None; 7],
            kept: [false; 7],
            threshold: 5.0,
            trigger: 10.0,
            eligible: vec![true; 4],
            eligible_count: 4,
        };
        let exchanges = |t: &Targets| {
            let v = View {
                model: &m,
                targets: t,
                typical_size: 1e7,
                mode: Mode::Full,
                step: 1,
            };
            v.candidates(3, DISK, &mut Tally::default(), None)
                .0
                .iter()
                .filter(|a| matches!(a, Action::Exchange { .. }))
                .count()
        };
        assert_eq!(exchanges(&t), 0);
        // With the counts left alone, exchanges are offered.
        t.active = [false, false, true, false, false, false, false];
        assert!(exchanges(&t) > 0);
    }

    #[test]
    fn a_partition_that_may_leave_its_rack_is_a_candidate_however_many_may_not() {
        // Racks r0 = {1, 4}, r1 = {2, 5}, r2 = {3, 6}. Broker 1 holds 400 partitions with one
        // replica per rack (100-499 MB: they may only go to broker 4) and one small partition
        // with two replicas in r0 (`x`, on 2, 1, 4), which may leave r0. However many of the
        // others fill the shortlist, `x` is offered to the brokers of the other racks.
        let mut partitions: Vec<SnapshotPartition> = (0..400)
            .map(|i| {
                let r1 = if i % 2 == 0 { 2 } else { 5 };
                let r2 = if i % 3 == 0 { 3 } else { 6 };
                partition("a", i, &[1, r1, r2], (100 + i as u64) * 1_000_000)
            })
            .collect();
        partitions.push(partition("x", 0, &[2, 1, 4], 1_000_000));
        let snapshot = Snapshot {
            format: SNAPSHOT_FORMAT.to_string(),
            taken_at: "2026-11-21T10:00:00Z".into(),
            cluster_id: None,
            brokers: (1..=6)
                .map(|id| SnapshotBroker {
                    id,
                    rack: Some(format!("r{}", (id - 1) % 3)),
                    state: BrokerState::Alive,
                })
                .collect(),
            partitions,
        };
        let m = Model::build(&snapshot, 0, 0);
        let total = m.load_totals();
        let fair = total.map(|sum| sum / 6.0);
        let mut on = [false; 7];
        on[DISK] = true;
        let t = Targets {
            fair,
            total,
            counted: on,
            active: on,
            floor: [None; 7],
            kept: [false; 7],
            threshold: 5.0,
            trigger: 10.0,
            eligible: vec![true; 6],
            eligible_count: 6,
        };
        let x = 400;
        for step in 1..=4 {
            let v = View {
                model: &m,
                targets: &t,
                typical_size: 1e8,
                mode: Mode::Full,
                step,
            };
            let (found, _) = v.candidates(0, DISK, &mut Tally::default(), None);
            let away: Vec<Bx> = found
                .iter()
                .filter_map(|a| match *a {
                    Action::Replica { pi, from: 0, to } if pi == x => Some(to),
                    _ => None,
                })
                .collect();
            // Brokers 3 and 6 (r2, new to `x`) and 5 (r1; r0 keeps broker 4's replica).
            assert!(
                away.contains(&2) && away.contains(&5) && away.contains(&4),
                "step {step}: {away:?}"
            );
        }
    }

    /// `found` best first, as [`View::best_moves`] ranks it.
    fn best_first(mut found: Vec<Scored>) -> Vec<Scored> {
        found.sort_unstable_by(|a, b| {
            if better(a, b) {
                std::cmp::Ordering::Less
            } else if better(b, a) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        });
        found
    }

    #[test]
    fn a_leadership_step_split_over_threads_finds_what_one_thread_finds() {
        // Broker 1 leads 400 partitions of 7 topics (followers on two of brokers 2-6); the
        // others lead none. With none, two thirds or all but one in twenty of its partitions
        // frozen, the first ranked changes hold a shortlist, or fewer, so the rest is looked
        // for on this thread, or everything is checked.
        let snapshot = cluster(
            6,
            (0..400)
                .map(|i| {
                    let size = 1_000_000 * (1 + i as u64 % 13);
                    let followers = [2 + i % 5, 2 + (i + 1) % 5];
                    partition(
                        &format!("t{}", i % 7),
                        i,
                        &[1, followers[0], followers[1]],
                        size,
                    )
                })
                .collect(),
        );
        let mut m = Model::build(&snapshot, 0, 0);
        let total = m.load_totals();
        let fair = total.map(|sum| sum / 6.0);
        let mut on = [false; 7];
        on[0] = true;
        let t = Targets {
            fair,
            total,
            counted: on,
            active: on,
            floor: [None; 7],
            kept: [false; 7],
            threshold: 5.0,
            trigger: 10.0,
            eligible: vec![true; 6],
            eligible_count: 6,
        };
        for frozen_unless_every in [1, 3, 20] {
            for (i, p) in m.parts.iter_mut().enumerate() {
                p.frozen = i % frozen_unless_every != 0;
            }
            for step in 1..=4 {
                let view = |step| View {
                    model: &m,
                    targets: &t,
                    typical_size: 1e6,
                    mode: Mode::Leadership,
                    step,
                };
                let v = view(step);
                let mut tally = Tally::default();
                let (actions, _) = v.candidates(0, 0, &mut tally, None);
                let mut found = Vec::new();
                for a in actions {
                    tally.evaluated += 1;
                    found.extend(v.evaluate(0, 0, a, &mut tally));
                }
                let work = |job: &Job, i: usize| view(job.step).run_chunk(job, i);
                let split = std::thread::scope(|scope| {
                    let pool = Pool::start(scope, 2, 2, 400, &work);
                    v.split_leaders(0, 0, None, &pool)
                });
                let Some((split_found, split_tally, threads)) = split else {
                    panic!("the step is split");
                };
                assert_eq!(threads, 2);
                assert!(tally.evaluated > 0 && tally.cooldown > 0 || frozen_unless_every == 1);
                assert_eq!(
                    format!("{:?} {tally:?}", best_first(found)),
                    format!("{:?} {split_tally:?}", best_first(split_found)),
                    "frozen unless every {frozen_unless_every}, step {step}"
                );
            }
        }
    }

    #[test]
    fn the_integer_ranking_key_orders_as_total_cmp() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            1.0,
            2.5,
            1e300,
            f64::INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        for a in xs {
            for b in xs {
                assert_eq!(ordered(a).cmp(&ordered(b)), a.total_cmp(&b), "{a} {b}");
            }
        }
    }

    fn actions(n: u32) -> Vec<Action> {
        (0..n).map(|pi| Action::Leader { pi, to: 0 }).collect()
    }

    fn scored(job_actions: &[Action]) -> Outcome {
        let scored = job_actions
            .iter()
            .map(|&action| Scored {
                action,
                score: f64::from(action.partition()),
            })
            .collect();
        let tally = Tally {
            evaluated: job_actions.len() as u64,
            ..Tally::default()
        };
        Outcome {
            scored,
            tally,
            ..Outcome::default()
        }
    }

    fn score_chunk(job: &Job, i: usize) -> Outcome {
        match &job.task {
            Task::Evaluate(actions) => scored(&actions[job.range(i)]),
            _ => Outcome::default(),
        }
    }

    #[test]
    fn a_step_is_split_over_threads_only_when_each_gets_enough_candidates() {
        std::thread::scope(|scope| {
            let pool = Pool::start(scope, 4, 4, MIN_CHUNK, &score_chunk);
            assert_eq!(pool.threads_for(MIN_CHUNK * 2 - 1), 1);
            assert_eq!(pool.threads_for(MIN_CHUNK * 2), 2);
            assert_eq!(pool.threads_for(MIN_CHUNK * 100), 4);
            // Many steps in a row: helpers take chunks whenever they claim them first, and
            // every chunk's outcome comes back in chunk order.
            for round in 0..200 {
                let n = MIN_CHUNK as u32 * 4 + 7 + round % 5;
                let (chunks, threads) = pool.evaluate((1, 0, 0), actions(n), score_chunk);
                assert_eq!(threads, 4);
                // Every candidate evaluated once, chunks in order.
                let all: Vec<u32> = chunks
                    .iter()
                    .flat_map(|c| c.scored.iter().map(|s| s.action.partition()))
                    .collect();
                assert_eq!(all, (0..n).collect::<Vec<_>>());
                let evaluated: u64 = chunks.iter().map(|c| c.tally.evaluated).sum();
                assert_eq!(evaluated, u64::from(n));
            }
        });
    }

    #[test]
    fn more_workers_than_cpus_split_steps_the_same_with_fewer_threads() {
        std::thread::scope(|scope| {
            let pool = Pool::start(scope, 4, 2, MIN_CHUNK, &score_chunk);
            assert_eq!((pool.workers, pool.threads, pool.helpers.len()), (4, 2, 1));
            // Candidates and broker pairs are split into as many chunks as workers; a
            // leadership step into one chunk per thread.
            assert_eq!(pool.threads_for(MIN_CHUNK * 100), 4);
            assert_eq!(pool.threads_for_pairs(16), 4);
            assert_eq!(pool.threads_for_leaders(SAMPLE), 2);
            assert_eq!(pool.threads_for_leaders(2 * LEADER_CHUNK - 1), 1);
            let n = MIN_CHUNK as u32 * 4;
            let (chunks, threads) = pool.evaluate((1, 0, 0), actions(n), score_chunk);
            assert_eq!((chunks.len(), threads), (4, 4));
            let all: Vec<u32> = chunks
                .iter()
                .flat_map(|c| c.scored.iter().map(|s| s.action.partition()))
                .collect();
            assert_eq!(all, (0..n).collect::<Vec<_>>());
        });
    }

    #[test]
    fn a_panicking_helper_thread_fails_the_search_instead_of_dropping_its_candidates() {
        // A chunk's work fails wherever it runs: on a helper (resumed here) or here, when this
        // thread claimed the chunk first.
        let work = |job: &Job, i: usize| -> Outcome {
            if i == 1 {
                panic!("injected failure in a helper");
            }
            score_chunk(job, i)
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            std::thread::scope(|scope| {
                let pool = Pool::start(scope, 2, 2, MIN_CHUNK, &work);
                pool.evaluate((1, 0, 0), actions(MIN_CHUNK as u32 * 2), work)
                    .1
            })
        }));
        let panic = outcome.expect_err("the helper's panic reaches the search");
        assert_eq!(
            panic.downcast_ref::<&str>().copied(),
            Some("injected failure in a helper")
        );
    }
}
