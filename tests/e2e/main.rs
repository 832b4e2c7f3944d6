//! End-to-end tests: they start the real `ballast` binary and look at it from outside, as an
//! operator would (processes, signals, HTTP, the database file), and `browser` drives the `/ui`
//! dashboard in headless Chromium.

mod auth;
mod browser;
mod chat;
mod cluster;
mod config;
mod execute;
mod heal;
mod http;
mod license;
mod live;
mod mcp;
mod observed;
mod oidc;
mod plan;
mod quorum;
mod real_provider;
mod realized;
mod rolling;
mod supervisor;
mod support;
mod tiered;
mod topics;
