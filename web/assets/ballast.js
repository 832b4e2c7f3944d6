// ballast dashboard: progressive enhancement only. Every page works without this script.
//  - <main data-refresh="N">: every N seconds the page is fetched again and each [data-live]
//    element is replaced by its new version with the same id. Not while the tab is hidden; a
//    live part that holds the keyboard focus (a field, a button, a link) is kept as it is, so
//    focus never jumps away. A live part whose id the new version lacks and that carries
//    data-gone="text" (the page shows something that has been replaced, e.g. a proposal that
//    is no longer current) is never swapped for the other thing: the text is shown with a
//    Reload link and refreshing stops.
//  - <form data-confirm="text">: asks before submitting.
//  - #tail: the live message tail of a topic over the API's server-sent events.
(function () {
  "use strict";

  function refreshLoop(main) {
    var seconds = parseInt(main.getAttribute("data-refresh"), 10);
    if (!(seconds > 0)) return;
    var status = document.getElementById("live-status");
    var timer = null;
    function holdsFocus(el) {
      var a = document.activeElement;
      return !!a && a !== document.body && a !== el.ownerDocument.documentElement && el.contains(a);
    }
    function gone(el) {
      if (timer !== null) { window.clearInterval(timer); timer = null; }
      if (document.getElementById("stale-notice")) return;
      var note = document.createElement("div");
      note.id = "stale-notice";
      note.className = "flash info";
      note.setAttribute("role", "status");
      note.appendChild(document.createTextNode(el.getAttribute("data-gone") + " "));
      var link = document.createElement("a");
      link.href = window.location.href;
      link.textContent = "Reload";
      note.appendChild(link);
      el.parentNode.insertBefore(note, el);
      if (status) status.textContent = "live · stopped: this page shows something that was replaced";
    }
    function tick() {
      if (document.hidden) return;
      fetch(window.location.href, { headers: { "Accept": "text/html" }, credentials: "same-origin" })
        .then(function (r) { if (!r.ok && r.status >= 500) throw new Error(String(r.status)); return r.text(); })
        .then(function (html) {
          if (timer === null) return;
          var doc = new DOMParser().parseFromString(html, "text/html");
          var kept = 0;
          document.querySelectorAll("[data-live][id]").forEach(function (el) {
            var fresh = doc.getElementById(el.id);
            if (!fresh) {
              if (el.hasAttribute("data-gone")) gone(el);
              return;
            }
            if (holdsFocus(el)) { kept += 1; return; }
            el.replaceWith(document.importNode(fresh, true));
          });
          if (status && timer !== null) {
            status.textContent = "live · updated " + new Date().toLocaleTimeString() +
              (kept ? " · the part with keyboard focus is paused" : "");
          }
        })
        .catch(function () { if (status) status.textContent = "live · update failed, retrying"; });
    }
    if (status) status.textContent = "live · every " + seconds + " s";
    timer = window.setInterval(tick, seconds * 1000);
  }

  function confirms() {
    document.addEventListener("submit", function (ev) {
      var form = ev.target;
      var text = form.getAttribute && form.getAttribute("data-confirm");
      if (text && !window.confirm(text)) ev.preventDefault();
    });
  }

  function tail() {
    var box = document.getElementById("tail");
    if (!box || !window.EventSource) return;
    var start = document.getElementById("tail-start");
    var stop = document.getElementById("tail-stop");
    var body = document.getElementById("tail-rows");
    var state = document.getElementById("tail-state");
    var source = null;
    var count = 0;
    box.hidden = false;
    function cell(tr, text, cls) {
      var td = document.createElement("td");
      td.textContent = text == null ? "—" : String(text);
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    function add(m) {
      var tr = document.createElement("tr");
      cell(tr, m.partition, "num");
      cell(tr, m.offset, "num");
      cell(tr, m.timestampIso);
      cell(tr, m.key, "wrap");
      var v = m.value == null ? null : (m.value.length > 300 ? m.value.slice(0, 300) + "…" : m.value);
      cell(tr, v, "wrap");
      body.insertBefore(tr, body.firstChild);
      while (body.rows.length > 200) body.deleteRow(body.rows.length - 1);
      count += 1;
      state.textContent = "receiving · " + count + " messages";
    }
    start.addEventListener("click", function () {
      if (source) return;
      var url = box.getAttribute("data-url");
      source = new EventSource(url);
      state.textContent = "connecting…";
      start.disabled = true;
      stop.disabled = false;
      source.addEventListener("subscribed", function () { state.textContent = "subscribed · waiting for new messages"; });
      source.addEventListener("message", function (ev) {
        try { add(JSON.parse(ev.data)); } catch (e) { /* ignore a malformed event */ }
      });
      source.addEventListener("error", function (ev) {
        if (ev.data) {
          try { state.textContent = "error: " + JSON.parse(ev.data).error; } catch (e) { state.textContent = "error"; }
        } else if (source && source.readyState === EventSource.CLOSED) {
          state.textContent = "stream closed";
        }
      });
    });
    stop.addEventListener("click", function () {
      if (source) source.close();
      source = null;
      start.disabled = false;
      stop.disabled = true;
      state.textContent = "stopped · " + count + " messages";
    });
  }

  // <button data-copy="ID">: copies the text of element ID (the new token's value).
  function copies() {
    document.querySelectorAll("button[data-copy]").forEach(function (button) {
      button.addEventListener("click", function () {
        var source = document.getElementById(button.getAttribute("data-copy"));
        if (!source || !navigator.clipboard) return;
        navigator.clipboard.writeText(source.textContent.trim()).then(function () {
          button.textContent = "Copied";
        });
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    copies();
    var main = document.querySelector("main[data-refresh]");
    if (main) refreshLoop(main);
    confirms();
    tail();
  });
})();
