// The game's page: the websocket of this server (whatever name or address the page was opened with), the
// keyboard on the terminal from the start (keys go nowhere until it has focus), and after the end, why the game
// closed (the server's close reason; a close without one is a lost link) and a reload.
"use strict";
(function () {
  const CLOSE_CODE = 4000;
  const terminal = document.getElementById("terminal");
  const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  terminal.dataset.sessionWebsocketUrl = scheme + window.location.host + "/ws";

  function closed(event) {
    const why = event.code === CLOSE_CODE ? event.reason : "lost";
    const notices = document.querySelectorAll(".closed-notice [data-why]");
    const known = Array.prototype.some.call(notices, function (notice) { return notice.dataset.why === why; });
    notices.forEach(function (notice) {
      notice.hidden = notice.dataset.why !== (known ? why : "lost");
    });
  }

  // The page's socket is opened by textual-serve's script: every socket of this page tells why it closed.
  const NativeSocket = window.WebSocket;
  window.WebSocket = class extends NativeSocket {
    constructor(url, protocols) {
      super(url, protocols);
      this.addEventListener("close", closed);
    }
  };

  function focusTerminal() {
    const input = document.querySelector(".xterm-helper-textarea");
    if (input === null) {
      return false;
    }
    input.focus();
    return true;
  }

  window.addEventListener("load", function () {
    let tries = 0;
    (function attempt() {
      if (!focusTerminal() && tries++ < 200) {
        window.setTimeout(attempt, 50);
      }
    })();
  });
  window.addEventListener("focus", focusTerminal);
  document.getElementById("reload").addEventListener("click", function () {
    window.location.reload();
  });
})();
