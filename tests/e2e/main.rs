//! End-to-end tests: they start the real `ballast` binary and look at it from outside, as an
//! operator would (processes, signals, HTTP, the database file).

mod cluster;
mod config;
mod execute;
mod http;
mod live;
mod observed;
mod plan;
mod supervisor;
mod support;
