/* Annotator pages: the 9-point scale (mouse, touch, keys 1-9, arrows + Enter), answers that survive a
   lost connection or a refusal (kept in localStorage until the server stored them, said 404 or holds another answer, retried
   with a visible notice), the browser's timings,
   and the heartbeat that keeps the lease of the item on screen alive. No dependencies. */
(function () {
  "use strict";

  var body = document.body;
  document.documentElement.classList.add("js"); // what needs this script (the keyboard hint) shows only now
  var memory = {};
  var storage = (function () {
    try {
      window.localStorage.setItem("studyapp.probe", "1");
      window.localStorage.removeItem("studyapp.probe");
      return window.localStorage;
    } catch (e) {
      return null; // private mode or disabled: fall back to memory (answers still retried while the page is open)
    }
  })();
  function load(key) {
    try {
      var raw = storage ? storage.getItem(key) : memory[key];
      return raw ? JSON.parse(raw) : null;
    } catch (e) {
      return null;
    }
  }
  function save(key, value) {
    var raw = JSON.stringify(value);
    try {
      if (storage) storage.setItem(key, raw); else memory[key] = raw;
    } catch (e) {
      memory[key] = raw;
    }
  }
  function drop(key) {
    try { if (storage) storage.removeItem(key); } catch (e) { /* ignore */ }
    delete memory[key];
  }
  function csrfToken() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    if (input) return input.value;
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }
  function post(url, fields) {
    return fetch(url, {
      method: "POST",
      body: new URLSearchParams(fields || {}),
      headers: { "X-CSRFToken": csrfToken(), "Accept": "application/json" },
      credentials: "same-origin",
      cache: "no-store"
    });
  }
  function newRequestId() {
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  // A page restored from the back/forward cache would show a stale item: ask the server again.
  window.addEventListener("pageshow", function (event) { if (event.persisted) window.location.reload(); });

  var ticks = [];
  var heartbeatUrl = body.getAttribute("data-heartbeat-url");
  if (heartbeatUrl) {
    var every = Math.max(1, Number(body.getAttribute("data-heartbeat-seconds")) || 60) * 1000;
    var onScreen = body.getAttribute("data-heartbeat-item"); // item pages: the one item whose lease a beat keeps
    window.setInterval(function () {
      post(heartbeatUrl, onScreen ? { item: onScreen } : {}).catch(function () { /* the next beat or the answer retries */ });
      ticks.forEach(function (fn) { fn(); });
    }, every);
  }

  // A study may ask for a minimum window width (Study.min_viewport_width): while the window is
  // narrower, the page is replaced by a friendly note (#too-narrow, in the page's language); it comes
  // back as soon as the window is wide enough (a turned phone, a wider window).
  var minWidth = Number(body.getAttribute("data-min-width")) || 0;
  var narrowNote = document.getElementById("too-narrow");
  if (minWidth && narrowNote) {
    var fit = function () {
      var width = document.documentElement.clientWidth || window.innerWidth;
      var narrow = width < minWidth;
      document.documentElement.classList.toggle("too-narrow", narrow);
      narrowNote.hidden = !narrow;
      var shown = narrowNote.querySelector("[data-window-width]");
      if (shown) shown.textContent = String(width);
    };
    fit();
    window.addEventListener("resize", fit);
  }

  var form = document.querySelector("form[data-scale]");
  if (!form) return;
  // The page's words for what this script says (drawn in the study's language with the scale).
  var textsNode = form.querySelector("[data-js-texts]");
  function text(name, fallback) {
    var value = textsNode && textsNode.getAttribute("data-" + name);
    return value || fallback;
  }
  var radios = Array.prototype.slice.call(form.querySelectorAll("input[name=value]"));
  var button = form.querySelector("button[type=submit]");
  var notice = form.querySelector(".notice");
  var isItem = form.getAttribute("data-mode") === "item";
  var assignment = form.getAttribute("data-assignment");
  var pendingKey = "studyapp.pending." + assignment;
  var timingKey = "studyapp.timing." + assignment;
  var sending = false;
  var retryTimer = null;
  var attempt = 0;

  function chosen() {
    for (var i = 0; i < radios.length; i++) if (radios[i].checked) return radios[i];
    return null;
  }
  function refresh() { button.disabled = sending || !chosen(); }
  function show(text, kind) {
    if (!notice) return;
    notice.hidden = !text;
    notice.className = "notice" + (kind ? " " + kind : "");
    notice.textContent = text || "";
  }
  function lock(value) {
    radios.forEach(function (r) {
      if (value !== undefined) r.checked = String(r.value) === String(value);
      r.disabled = true;
    });
  }
  function unlock() { radios.forEach(function (r) { r.disabled = false; }); }

  // Progressive enhancement: the server renders nothing chosen and the button enabled (without this
  // script the form posts normally; `required` asks for a choice). A choice made before this script
  // ran is kept; the browser restores none (the form is autocomplete="off", back/forward reloads).
  refresh();

  // Timing. The start is the first time this item was shown in this browser (kept across reloads,
  // like the server's first-serve time); visible time counts only while the page is visible.
  var now = function () { return Date.now(); };
  var navigationStart = Math.round(window.performance && performance.timeOrigin ? performance.timeOrigin : now());
  var timing = (isItem && load(timingKey)) || { start: navigationStart, visible: 0, first: null };
  var visibleSince = document.visibilityState === "visible" ? navigationStart : null;
  function visibleMs() { return timing.visible + (visibleSince !== null ? now() - visibleSince : 0); }
  function persist() {
    if (isItem) save(timingKey, { start: timing.start, visible: visibleMs(), first: timing.first });
  }
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") {
      if (visibleSince === null) visibleSince = now();
    } else if (visibleSince !== null) {
      timing.visible += now() - visibleSince;
      visibleSince = null;
      persist();
    }
  });
  window.addEventListener("pagehide", persist);
  ticks.push(persist);
  function firstInput() {
    if (timing.first === null) {
      timing.first = Math.max(0, now() - timing.start);
      persist();
    }
  }
  ["pointerdown", "keydown", "wheel", "touchstart"].forEach(function (type) {
    window.addEventListener(type, firstInput, { capture: true, passive: true });
  });
  persist();

  function choose(index) {
    if (sending) return;
    var r = radios[Math.max(0, Math.min(radios.length - 1, index))];
    r.checked = true;
    r.focus();
    refresh();
  }
  form.addEventListener("change", refresh);

  // Keys 1-9, the arrows and Enter answer only while focus is in the answer region (or nowhere, on the
  // page's body): on a link, a button or any other control they keep their usual meaning.
  function answersKeys(t) {
    if (!t || t === body || t === document.documentElement) return true;
    if (radios.indexOf(t) >= 0) return true;
    return form.contains(t) && !t.closest("a, button, input, select, textarea, summary, [contenteditable]");
  }
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || e.defaultPrevented) return;
    var t = e.target;
    if (!answersKeys(t)) return;
    var inScale = radios.indexOf(t) >= 0;
    if (/^[1-9]$/.test(e.key)) {
      e.preventDefault();
      choose(Number(e.key) - 1);
    } else if ((e.key === "ArrowLeft" || e.key === "ArrowRight") && !inScale) {
      e.preventDefault();
      var c = chosen();
      choose(c ? radios.indexOf(c) + (e.key === "ArrowLeft" ? -1 : 1) : 4);
    } else if (e.key === "Enter" && (inScale || !t || t === body || t === document.documentElement || t.tagName === "FIELDSET")) {
      e.preventDefault();
      submit();
    }
  });

  var skip = document.querySelector(".skip");
  if (skip) {
    skip.addEventListener("click", function (e) {
      e.preventDefault();
      (chosen() || radios[0]).focus();
    });
  }

  function submit() {
    if (sending || !chosen()) return;
    if (form.requestSubmit) form.requestSubmit(); else form.dispatchEvent(new Event("submit", { cancelable: true }));
  }

  form.addEventListener("submit", function (e) {
    var c = chosen();
    if (sending || !c) {
      e.preventDefault();
      return;
    }
    if (!isItem) { // the practice item posts the form the ordinary way, once
      sending = true;
      window.setTimeout(refresh, 0);
      return;
    }
    e.preventDefault();
    var pending = {
      url: form.action,
      fields: {
        value: c.value,
        request_id: newRequestId(),
        client_ms: ms(now() - timing.start),
        visible_ms: ms(visibleMs()),
        first_interaction_ms: timing.first === null ? "" : ms(timing.first)
      }
    };
    save(pendingKey, pending); // from here on the answer survives a reload, a crash or a lost connection
    send(pending);
  });

  // A timing as the server reads it: whole milliseconds, never negative; "" (unknown) if the clock gave nonsense.
  function ms(value) { return isFinite(value) ? String(Math.max(0, Math.round(value))) : ""; }

  function retryLater() {
    var delays = [1000, 2000, 4000, 8000, 15000];
    var delay = delays[Math.min(attempt, delays.length - 1)];
    attempt += 1;
    show(text("offline", "No connection to the server. Your answer is saved in this browser and will be sent automatically " +
              "(next try in {seconds} s). Please keep this page open.").replace("{seconds}", String(Math.round(delay / 1000))), "warn");
    window.clearTimeout(retryTimer);
    retryTimer = window.setTimeout(function () { send(load(pendingKey) || current); }, delay);
  }

  // Besides a stored answer (2xx, a repeat included), only a 404 (no such item of this annotator) or a
  // conflict (the item holds another answer already, which is never changed) lets the browser forget it.
  function definitive(status, data) { return status === 404 || (status === 409 && data && data.error === "conflict"); }

  var current = null;
  function send(pending) {
    current = pending;
    sending = true;
    lock(pending.fields.value);
    refresh();
    window.clearTimeout(retryTimer);
    if (attempt > 0) show(text("sending", "Sending your saved answer\u2026"), "warn");
    post(pending.url, pending.fields).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        if (response.ok && data.next) {
          drop(pendingKey);
          drop(timingKey);
          show(data.finished ? text("saved-all", "Saved. All answers are stored.") : text("saved", "Saved."), "good");
          window.location.assign(data.next);
        } else if (response.status >= 500 || response.status === 429) {
          retryLater();
        } else {
          // Only a 404 or a conflict is final (see definitive). Any other refusal keeps the answer in
          // this browser: it is sent again on the next load of its page (e.g. after a new session).
          if (definitive(response.status, data)) drop(pendingKey);
          sending = false;
          attempt = 0;
          unlock();
          refresh();
          show((data.message || text("not-stored", "Your answer was not stored.")) + " " + text("reload", "Reload the page to continue."), "error");
        }
      });
    }, retryLater);
  }
  window.addEventListener("online", function () {
    if (sending && current && attempt > 0) send(load(pendingKey) || current);
  });

  if (isItem) {
    var saved = load(pendingKey);
    if (saved) {
      attempt = 1;
      send(saved); // the page was reloaded before the answer got through
    }
    // Answers of other items left in this browser (rare: e.g. two tabs): deliver them too.
    for (var i = 0; storage && i < storage.length; i++) {
      var key = storage.key(i);
      if (key && key.indexOf("studyapp.pending.") === 0 && key !== pendingKey) {
        (function (k, other) {
          if (!other || !other.url) return drop(k);
          post(other.url, other.fields).then(function (r) {
            return r.json().catch(function () { return {}; }).then(function (data) { if (r.ok || definitive(r.status, data)) drop(k); });
          }, function () { /* next page load */ });
        })(key, load(key));
      }
    }
  }
})();
