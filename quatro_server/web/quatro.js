// The game's page: the websocket of this server (whatever name or address the page was opened with), the
// keyboard on the terminal from the start (keys go nowhere until it has focus), and a reload after the end.
"use strict";
(function () {
  const terminal = document.getElementById("terminal");
  const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  terminal.dataset.sessionWebsocketUrl = scheme + window.location.host + "/ws";

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
