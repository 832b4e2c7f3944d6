//! Server-rendered SVG: a broker's load against its fair share as a bar, and load history as line
//! charts. Output is inserted into pages unescaped, so every piece of text in it goes through
//! [`esc`] and every number is formatted here; colours come from CSS classes (the page's content
//! security policy allows no inline styles).

use std::fmt::Write;

use serde_json::Value;

use super::fmt;

/// HTML/XML-escapes text for an element or an attribute value.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// How far from fair share a load is: within the threshold, within the trigger, beyond it.
pub fn band(distance: Option<f64>, threshold: f64) -> &'static str {
    match distance {
        None => "na",
        Some(d) if d.abs() <= threshold => "ok",
        Some(d) if d.abs() <= 2.0 * threshold => "warn",
        Some(_) => "bad",
    }
}

/// A bar of `value` on a scale where fair share sits in the middle (the bar's full width is
/// twice the fair share), with a tick at fair share. `label` is the accessible text.
pub fn load_bar(
    value: Option<f64>,
    fair: Option<f64>,
    distance: Option<f64>,
    threshold: f64,
    label: &str,
) -> String {
    const W: f64 = 100.0;
    let class = band(distance, threshold);
    let width = match (value, fair) {
        (Some(v), Some(f)) if f > 0.0 => (v / (2.0 * f)).clamp(0.0, 1.0) * W,
        (Some(v), _) if v > 0.0 => W,
        _ => 0.0,
    };
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg class="bar" viewBox="0 0 {W} 10" width="100" height="10" role="img" aria-label="{label}"><title>{label}</title><rect class="track {class}" x="0" y="1" width="{W}" height="8" rx="1"/><rect class="fill {class}" x="0" y="1" width="{width:.2}" height="8" rx="1"/>"#,
        label = esc(label),
    );
    if fair.is_some_and(|f| f > 0.0) {
        let _ = write!(
            out,
            r#"<line class="fair" x1="50" y1="0" x2="50" y2="10"/>"#
        );
    }
    out.push_str("</svg>");
    out
}

/// A progress bar of `done` out of `total` (empty when the total is unknown or 0).
pub fn progress(done: f64, total: f64, label: &str) -> String {
    const W: f64 = 100.0;
    let width = if total > 0.0 && done.is_finite() {
        (done / total).clamp(0.0, 1.0) * W
    } else {
        0.0
    };
    format!(
        r#"<svg class="bar progress" viewBox="0 0 {W} 10" width="100" height="10" role="img" aria-label="{label}"><title>{label}</title><rect class="track" x="0" y="1" width="{W}" height="8" rx="1"/><rect class="fill done" x="0" y="1" width="{width:.2}" height="8" rx="1"/></svg>"#,
        label = esc(label)
    )
}

/// One line of a chart: a label and its points (Unix ms, value; `None` is a gap).
pub struct Series {
    pub label: String,
    pub points: Vec<(i64, Option<f64>)>,
}

/// A line chart of `series` over time, values formatted by `format`. Each series gets the CSS
/// class `s<n>` (its colour); the legend is the caller's (see [`legend_class`]).
pub fn line_chart(title: &str, series: &[Series], format: &dyn Fn(f64) -> String) -> String {
    const W: f64 = 640.0;
    const H: f64 = 200.0;
    const LEFT: f64 = 78.0;
    const RIGHT: f64 = 12.0;
    const TOP: f64 = 10.0;
    const BOTTOM: f64 = 24.0;
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let all = series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter_map(|(t, v)| v.filter(|v| v.is_finite()).map(|v| (*t, v)));
    let (mut t0, mut t1, mut vmax) = (i64::MAX, i64::MIN, 0.0f64);
    let mut any = false;
    for (t, v) in all {
        any = true;
        t0 = t0.min(t);
        t1 = t1.max(t);
        vmax = vmax.max(v);
    }
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg class="chart" viewBox="0 0 {W} {H}" role="img" aria-label="{t}"><title>{t}</title>"#,
        t = esc(title)
    );
    if !any {
        let _ = write!(
            out,
            r#"<text class="axis" x="{x}" y="{y}" text-anchor="middle">no readings in this range</text></svg>"#,
            x = W / 2.0,
            y = H / 2.0
        );
        return out;
    }
    if vmax <= 0.0 {
        vmax = 1.0;
    }
    // Four gridline steps of a size that reads round in the chart's own unit.
    let vmax = nice_step(vmax, format) * 4.0;
    let span = (t1 - t0).max(1) as f64;
    let x = |t: i64| LEFT + (t - t0) as f64 / span * plot_w;
    let y = |v: f64| TOP + plot_h - (v / vmax).clamp(0.0, 1.0) * plot_h;
    for step in 0..=4 {
        let v = vmax * f64::from(step) / 4.0;
        let yy = y(v);
        let _ = write!(
            out,
            r#"<line class="grid" x1="{LEFT}" y1="{yy:.1}" x2="{x2}" y2="{yy:.1}"/><text class="axis" x="{tx}" y="{ty:.1}" text-anchor="end">{label}</text>"#,
            x2 = W - RIGHT,
            tx = LEFT - 6.0,
            ty = yy + 4.0,
            label = esc(&format(v)),
        );
    }
    let mid = t0 + (t1 - t0) / 2;
    for (t, anchor) in [(t0, "start"), (mid, "middle"), (t1, "end")] {
        let _ = write!(
            out,
            r#"<text class="axis" x="{xx:.1}" y="{yy}" text-anchor="{anchor}">{label} UTC</text>"#,
            xx = x(t),
            yy = H - 6.0,
            label = super::fmt::clock(t, t1 - t0),
        );
    }
    for (n, s) in series.iter().enumerate() {
        let class = legend_class(n);
        let mut run: Vec<String> = Vec::new();
        let flush = |run: &mut Vec<String>, out: &mut String| {
            match run.len() {
                0 => {}
                1 => {
                    // A lone point between gaps: a dot, so it is not lost.
                    if let Some((cx, cy)) = run[0].split_once(',') {
                        let _ = write!(
                            out,
                            r#"<circle class="dot {class}" cx="{cx}" cy="{cy}" r="2.5"/>"#
                        );
                    }
                }
                _ => {
                    let _ = write!(
                        out,
                        r#"<polyline class="line {class}" points="{}"/>"#,
                        run.join(" ")
                    );
                }
            }
            run.clear();
        };
        for (t, v) in &s.points {
            match v.filter(|v| v.is_finite()) {
                Some(v) => run.push(format!("{:.1},{:.1}", x(*t), y(v))),
                None => flush(&mut run, &mut out),
            }
        }
        flush(&mut run, &mut out);
    }
    out.push_str("</svg>");
    out
}

/// The CSS class of the `n`th series (colours repeat after ten).
pub fn legend_class(n: usize) -> String {
    format!("s{}", n % 10)
}

/// The gridline step for values up to `vmax`: the smallest 1, 2, 2.5 or 5 times a power of ten
/// (or of ten times a power of 1024, for binary units) at or above a quarter of `vmax` whose
/// five labels, as `format` writes them, are all different and round (two significant digits at
/// most): no `0, 0, 1, 1, 1` on a count axis, no `2.33 GiB` on a byte axis.
fn nice_step(vmax: f64, format: &dyn Fn(f64) -> String) -> f64 {
    let quarter = vmax / 4.0;
    let mut candidates: Vec<f64> = Vec::new();
    for k in 0..6 {
        let base = 1024f64.powi(k);
        for e in -3..16 {
            for m in [1.0, 2.0, 2.5, 5.0] {
                let c = m * 10f64.powi(e) * base;
                if c >= quarter * 0.999_999 {
                    candidates.push(c);
                }
            }
        }
    }
    candidates.sort_by(f64::total_cmp);
    for c in candidates.into_iter().take(80) {
        let labels: Vec<String> = (0..=4).map(|i| format(c * f64::from(i))).collect();
        let distinct = labels.windows(2).all(|w| w[0] != w[1]);
        if distinct && labels.iter().all(|l| round_label(l)) {
            return c;
        }
    }
    nice_ceiling(quarter)
}

/// Whether a label's number has two significant digits at most (`2.50 GiB`, `40`, `12,000`).
fn round_label(label: &str) -> bool {
    let number: String = label
        .trim_start_matches(['+', '-'])
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',')
        .filter(|c| *c != ',')
        .collect();
    let Ok(x) = number.parse::<f64>() else {
        return true;
    };
    if x == 0.0 {
        return true;
    }
    let scale = 10f64.powf(x.abs().log10().floor() - 1.0);
    let digits = x.abs() / scale;
    (digits - digits.round()).abs() < 1e-6
}

/// The smallest of 1, 2, 2.5 or 5 times a power of ten at or above `v`.
fn nice_ceiling(v: f64) -> f64 {
    let exp = v.log10().floor();
    let base = 10f64.powf(exp);
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if m * base >= v * 0.999_999 {
            return m * base;
        }
    }
    10.0 * base
}

/// A chart with its caption and legend.
pub struct Chart {
    pub caption: String,
    pub svg: String,
    pub legend: Vec<(String, String)>,
}

/// The points of `load` in a history answer.
pub fn points(history: &Value, load: &str) -> Vec<(i64, Option<f64>)> {
    fmt::arr(history, "points")
        .iter()
        .filter_map(|p| Some((fmt::i(p, "atMs")?, p["values"][load].as_f64())))
        .collect()
}

/// A chart of `load` over `series`, captioned, with its legend.
pub fn chart(caption: &str, load: &str, series: &[Series]) -> Chart {
    let load = load.to_string();
    let format = move |v: f64| fmt::load_value(&load, Some(v));
    Chart {
        caption: caption.to_string(),
        svg: line_chart(caption, series, &format),
        legend: series
            .iter()
            .enumerate()
            .map(|(n, s)| (legend_class(n), s.label.clone()))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_everywhere() {
        let bar = load_bar(Some(1.0), Some(1.0), Some(0.0), 5.0, "<b>\"x\"</b>");
        assert!(!bar.contains("<b>"));
        assert!(bar.contains("&lt;b&gt;&quot;x&quot;"));
        let chart = line_chart(
            "<script>",
            &[Series {
                label: "a".into(),
                points: vec![(0, Some(1.0)), (60_000, Some(2.0))],
            }],
            &|v| format!("{v}<"),
        );
        assert!(!chart.contains("<script>"));
        assert!(chart.contains("&lt;script&gt;"));
        assert!(chart.contains("polyline"));
    }

    #[test]
    fn bars_scale_to_twice_fair_share() {
        let bar = load_bar(Some(15.0), Some(10.0), Some(50.0), 5.0, "x");
        assert!(
            bar.contains(r#"class="fill bad" x="0" y="1" width="75.00""#),
            "{bar}"
        );
        let none = load_bar(None, Some(10.0), None, 5.0, "x");
        assert!(
            none.contains(r#"class="fill na" x="0" y="1" width="0.00""#),
            "{none}"
        );
    }

    #[test]
    fn gaps_split_lines_and_nice_scale() {
        let chart = line_chart(
            "t",
            &[Series {
                label: "a".into(),
                points: vec![(0, Some(1.0)), (1, Some(2.0)), (2, None), (3, Some(3.0))],
            }],
            &|v| v.to_string(),
        );
        assert_eq!(chart.matches("<polyline").count(), 1);
        assert_eq!(chart.matches("<circle").count(), 1);
        assert_eq!(nice_ceiling(3.2), 5.0);
        assert_eq!(nice_ceiling(120.0), 200.0);
        assert_eq!(nice_ceiling(1.0), 1.0);
        // 31 leaders: gridlines at 0, 10, 20, 30, 40.
        let chart = line_chart(
            "t",
            &[Series {
                label: "a".into(),
                points: vec![(0, Some(31.0)), (60_000, Some(31.0))],
            }],
            &|v| format!("{v}"),
        );
        assert!(chart.contains(">40<") && chart.contains(">10<"), "{chart}");
    }

    /// The five gridline labels of a chart.
    fn labels(chart: &str) -> Vec<String> {
        chart
            .split(r#"text-anchor="end">"#)
            .skip(1)
            .filter_map(|s| s.split('<').next())
            .filter(|l| !l.ends_with("UTC"))
            .map(str::to_string)
            .collect()
    }

    fn chart_of(max: f64, format: &dyn Fn(f64) -> String) -> String {
        line_chart(
            "t",
            &[Series {
                label: "a".into(),
                points: vec![(0, Some(0.0)), (60_000, Some(max))],
            }],
            format,
        )
    }

    #[test]
    fn axis_labels_are_round_in_the_charts_unit_and_never_repeat() {
        // Bytes: steps round in GiB, not 2.5 × 10^9 (2.33 GiB).
        let bytes = labels(&chart_of(9.5e9, &crate::fmt::bytes));
        assert_eq!(
            bytes,
            ["0 B", "2.50 GiB", "5.00 GiB", "7.50 GiB", "10.0 GiB"]
        );
        // A count of one: whole steps, not 0, 0, 1, 1, 1.
        let counts = labels(&chart_of(1.0, &crate::fmt::count));
        assert_eq!(counts, ["0", "1", "2", "3", "4"]);
        // Rates in MiB/s.
        let rates = labels(&chart_of(30.0 * 1024.0 * 1024.0, &crate::fmt::byte_rate));
        assert_eq!(rates[4], "40.0 MiB/s");
    }

    #[test]
    fn an_empty_chart_says_so() {
        assert!(line_chart("t", &[], &|v| v.to_string()).contains("no readings"));
    }
}
