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
//  - #chat-panel: the assistant (docs/chat.md), on every page when it is enabled: streamed
//    answers, tool calls as collapsible cards, Approve/Reject on a change that waits.
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


  // The assistant's panel. The conversation's id is kept for the tab (sessionStorage), so the
  // panel follows the operator from page to page.
  function chat() {
    var panel = document.getElementById("chat-panel");
    var toggle = document.getElementById("chat-toggle");
    if (!panel || !toggle || !window.fetch || !window.TextDecoder) return;
    var log = document.getElementById("chat-log");
    var form = document.getElementById("chat-form");
    var input = document.getElementById("chat-input");
    var send = document.getElementById("chat-send");
    var KEY = "ballast.chat.conversation";
    var conversation = window.sessionStorage.getItem(KEY);
    var loaded = false;
    var answer = null;

    function api(method, path, body) {
      return fetch(path, {
        method: method, credentials: "same-origin",
        headers: body ? { "Content-Type": "application/json", "Accept": "text/event-stream, application/json" } : { "Accept": "application/json" },
        body: body ? JSON.stringify(body) : undefined
      });
    }
    function el(tag, cls, text) {
      var e = document.createElement(tag);
      if (cls) e.className = cls;
      if (text != null) e.textContent = text;
      return e;
    }
    function scroll() { log.scrollTop = log.scrollHeight; }
    function say(role, text) {
      var m = el("div", "chat-msg " + role, text);
      log.appendChild(m);
      scroll();
      return m;
    }
    function pretty(v) {
      var t = JSON.stringify(v, null, 2) || "";
      return t.length > 6000 ? t.slice(0, 6000) + "\n…" : t;
    }
    function card(id, name) {
      var found = log.querySelector('details[data-call="' + CSS.escape(id) + '"]');
      if (found) return found;
      var d = el("details", "chat-tool");
      d.setAttribute("data-call", id);
      var s = el("summary", null, name + " · running…");
      d.appendChild(s);
      log.appendChild(d);
      scroll();
      return d;
    }
    function finished(d, data) {
      var s = d.querySelector("summary");
      var verdict = data.ok ? "done" : (data.result && data.result.rejected ? "rejected" : "failed");
      s.textContent = data.name + " · " + verdict;
      d.classList.add(data.ok ? "ok" : "bad");
      var pre = d.querySelector("pre.result") || d.appendChild(el("pre", "wrap result"));
      pre.textContent = pretty(data.result);
      var buttons = d.querySelector(".chat-approval");
      if (buttons) buttons.remove();
    }
    function approval(data) {
      var d = card(data.toolCallId, data.name);
      d.open = true;
      d.querySelector("summary").textContent = data.name + " · waiting for your approval";
      d.appendChild(el("p", null, data.summary || ""));
      d.appendChild(el("pre", "wrap", pretty(data.arguments)));
      var row = el("div", "chat-approval");
      var yes = el("button", null, "Approve");
      yes.type = "button";
      yes.setAttribute("data-approve", data.toolCallId);
      var no = el("button", "secondary", "Reject");
      no.type = "button";
      no.setAttribute("data-reject", data.toolCallId);
      [yes, no].forEach(function (b) {
        b.addEventListener("click", function () {
          yes.disabled = true; no.disabled = true;
          run(api("POST", b === yes ? data.approve : data.reject));
        });
      });
      row.appendChild(yes); row.appendChild(no);
      d.appendChild(row);
      scroll();
    }
    function on(event, data) {
      if (event === "text") {
        if (!answer) answer = say("assistant", "");
        answer.textContent += data.delta || "";
        scroll();
      } else if (event === "tool_call_started") {
        answer = null;
        card(data.toolCallId, data.name);
      } else if (event === "tool_call_finished") {
        finished(card(data.toolCallId, data.name), data);
      } else if (event === "approval_needed") {
        approval(data);
      } else if (event === "message") {
        answer = null;
      } else if (event === "error") {
        say("error", (data.code || "error") + ": " + (data.message || ""));
      } else if (event === "done") {
        answer = null;
        busy(data.status === "awaiting_approval");
      }
    }
    function busy(on) { send.disabled = on; input.disabled = on; }
    // Reads a server-sent-event response (fetch: EventSource cannot POST).
    function run(request) {
      busy(true);
      return request.then(function (r) {
        if (!r.ok || !r.body) {
          return r.json().then(function (e) { say("error", (e.error || r.status) + ": " + (e.details || "")); busy(false); },
                               function () { say("error", "HTTP " + r.status); busy(false); });
        }
        var reader = r.body.getReader();
        var decoder = new TextDecoder();
        var buffer = "";
        function pump() {
          return reader.read().then(function (chunk) {
            if (chunk.done) return;
            buffer += decoder.decode(chunk.value, { stream: true });
            var i;
            while ((i = buffer.indexOf("\n\n")) >= 0) {
              var block = buffer.slice(0, i);
              buffer = buffer.slice(i + 2);
              var name = null, data = "";
              block.split("\n").forEach(function (line) {
                if (line.indexOf("event:") === 0) name = line.slice(6).trim();
                else if (line.indexOf("data:") === 0) data += line.slice(5).trim();
              });
              if (name) { try { on(name, JSON.parse(data)); } catch (e) { on(name, {}); } }
            }
            return pump();
          });
        }
        return pump();
      }).catch(function (e) { say("error", "the answer stopped: " + e); busy(false); });
    }
    function show(c) {
      log.textContent = "";
      (c.messages || []).forEach(function (m) {
        if (m.role === "user") say("user", m.content);
        else if (m.role === "assistant") {
          if (m.content) say("assistant", m.content);
          if (m.error) say("error", m.error.code + ": " + m.error.message);
        }
      });
      (c.toolCalls || []).forEach(function (t) {
        var d = card(t.id, t.name);
        if (t.state === "pending_approval") {
          approval({ toolCallId: t.id, name: t.name, arguments: t.arguments, summary: t.summary,
            approve: "/api/v1/chat/conversations/" + c.id + "/approve/" + t.id,
            reject: "/api/v1/chat/conversations/" + c.id + "/reject/" + t.id });
          busy(true);
        } else if (t.state === "done" || t.state === "failed" || t.state === "rejected") {
          finished(d, { name: t.name, ok: t.state === "done", result: t.result });
        }
      });
    }
    function ensure() {
      if (conversation) return Promise.resolve(conversation);
      return api("POST", "/api/v1/chat/conversations", {}).then(function (r) { return r.json(); }).then(function (c) {
        conversation = c.data.id;
        window.sessionStorage.setItem(KEY, conversation);
        return conversation;
      });
    }
    function load() {
      if (loaded || !conversation) return;
      loaded = true;
      api("GET", "/api/v1/chat/conversations/" + conversation).then(function (r) {
        if (r.status === 404) { conversation = null; window.sessionStorage.removeItem(KEY); return null; }
        return r.json();
      }).then(function (c) { if (c && c.data) show(c.data); });
    }
    toggle.addEventListener("click", function () {
      panel.hidden = !panel.hidden;
      toggle.setAttribute("aria-expanded", String(!panel.hidden));
      if (!panel.hidden) { load(); input.focus(); }
    });
    document.getElementById("chat-new").addEventListener("click", function () {
      conversation = null;
      window.sessionStorage.removeItem(KEY);
      log.textContent = "";
      busy(false);
    });
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var text = input.value.trim();
      if (!text) return;
      input.value = "";
      say("user", text);
      ensure().then(function (id) {
        run(api("POST", "/api/v1/chat/conversations/" + id + "/messages", { content: text }));
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    copies();
    var main = document.querySelector("main[data-refresh]");
    if (main) refreshLoop(main);
    confirms();
    tail();
    chat();
  });
})();
