// The Awari oracle page: plays and analyses positions through the JSON API of
// `awari-probe serve`. Plain JavaScript, no build step, nothing from the network.
//
// The page keeps the game the way it is drawn: South (bottom row, pits A.. left
// to right) and North (top row, pits a.. right to left), each with a store. The
// API sees every board from the player to move, the mover's pits first, so
// `moverBoard` and `fromMover` turn one view into the other.
"use strict";

const $ = (id) => document.getElementById(id);
const other = (side) => (side === "S" ? "N" : "S");
const sideName = (side) => (side === "S" ? "South" : "North");
/** Milliseconds per seed of the sowing animation (`?speed=` in the address). */
const SOW_MS = Number(new URLSearchParams(location.search).get("speed") ?? 180);

let games = [];        // from /api/info
let game = null;       // {rules, pits, levels, complete_up_to}
let state = null;      // {rows: {S, N}, stores: {S, N}, toMove}
let history = [];      // [{state, label}]: the positions played, label = move that led here
let at = 0;            // index of the shown position in history
let analysis = null;   // /api/position answer for the shown position, or null
let busy = false;      // a move is being animated or a position fetched
let setupMode = false;
/**
 * How endless play ends: "even-split" (the databases' rule), "any" (bounds under every
 * repetition rule), or a rule of play searched with the game's history: "own-rows" (the
 * first repetition since the last capture ends the game, each side taking its own row,
 * as OpenSpiel and Aalina play) or "three-fold". `?repetition=` in the address.
 */
const REPETITIONS = ["even-split", "any", "own-rows", "three-fold"];
let repetition = (() => {
  const asked = new URLSearchParams(location.search).get("repetition");
  return REPETITIONS.includes(asked) ? asked : "even-split";
})();

// ---- talking to the server ----

async function api(path, options) {
  const response = await fetch(path, options);
  const body = await response.json();
  if (!response.ok) {
    const err = new Error(body.error || response.statusText);
    err.missingLevel = body.missing_level;
    throw err;
  }
  return body;
}

/** The board as the API sees it: the mover's row, then the opponent's. */
function moverBoard(s) {
  return s.rows[s.toMove].concat(s.rows[other(s.toMove)]);
}

/** A state from a board and captured pair seen from `toMove`. */
function fromMover(board, captured, toMove) {
  const p = board.length / 2;
  return {
    rows: { [toMove]: board.slice(0, p), [other(toMove)]: board.slice(p) },
    stores: { [toMove]: captured[0], [other(toMove)]: captured[1] },
    toMove,
  };
}

function copy(s) {
  return { rows: { S: [...s.rows.S], N: [...s.rows.N] }, stores: { ...s.stores }, toMove: s.toMove };
}

function positionQuery(s) {
  const q = new URLSearchParams({
    board: moverBoard(s).join(" "),
    captured: `${s.stores[s.toMove]},${s.stores[other(s.toMove)]}`,
    rules: game.rules,
  });
  if (repetition !== "even-split") q.set("repetition", repetition);
  if (repetition === "own-rows" || repetition === "three-fold") {
    const earlier = positionsSinceCapture();
    if (earlier) q.set("history", earlier);
  }
  return `/api/position?${q}`;
}

/** Seeds on the board of a state. */
function seedsOnBoard(s) {
  return s.rows.S.concat(s.rows.N).reduce((a, b) => a + b, 0);
}

/**
 * The positions played before the shown one since the last capture, oldest first, each
 * seen from its mover and separated by ";": the API's `history`.
 */
function positionsSinceCapture() {
  const seeds = seedsOnBoard(history[at].state);
  const boards = [];
  for (let k = at - 1; k >= 0 && seedsOnBoard(history[k].state) === seeds; k--) {
    boards.unshift(moverBoard(history[k].state).join(" "));
  }
  return boards.join(";");
}

// ---- drawing ----

function seedsHtml(n) {
  const shown = Math.min(n, 24);
  let dots = "";
  for (let i = 0; i < shown; i++) dots += '<i class="seed"></i>';
  return `<span class="seeds">${dots}</span><span class="count">${n}</span>`;
}

/** A pit's letter: South A.., North a... */
function pitLabel(side, i) {
  return String.fromCharCode((side === "S" ? 65 : 97) + i);
}

function buildBoard() {
  $("board").style.setProperty("--pits", game.pits);
  for (const side of ["N", "S"]) {
    const row = $(`row-${side}`);
    row.innerHTML = "";
    for (let j = 0; j < game.pits; j++) {
      // North's row is drawn right to left, so that sowing goes round.
      const i = side === "N" ? game.pits - 1 - j : j;
      const pit = document.createElement("div");
      pit.className = "pit-cell";
      pit.innerHTML =
        `<button class="pit" id="pit-${side}-${i}" data-side="${side}" data-pit="${i}"></button>` +
        `<span class="label">${pitLabel(side, i)}</span>` +
        `<span class="badge" id="badge-${side}-${i}"></span>` +
        `<span class="edit"><button class="minus" id="minus-${side}-${i}">−</button>` +
        `<button class="plus" id="plus-${side}-${i}">+</button></span>`;
      row.appendChild(pit);
      pit.querySelector(".pit").addEventListener("click", () => clickPit(side, i));
      pit.querySelector(".minus").addEventListener("click", () => edit(side, i, -1));
      pit.querySelector(".plus").addEventListener("click", () => edit(side, i, 1));
    }
  }
}

function drawSeeds(s) {
  for (const side of ["S", "N"]) {
    s.rows[side].forEach((n, i) => {
      const pit = $(`pit-${side}-${i}`);
      pit.innerHTML = seedsHtml(n);
      pit.dataset.seeds = n;
    });
    $(`store-${side}`).querySelector(".count").textContent = s.stores[side];
  }
}

function signed(v) {
  return v > 0 ? `+${v}` : `${v}`;
}

/** What value `v` of a move means for the mover with the seeds captured. */
function meaning(v, s) {
  const margin = s.stores[s.toMove] - s.stores[other(s.toMove)] + v;
  const word = margin > 0 ? "win" : margin < 0 ? "loss" : "draw";
  return margin === 0 ? word : `${word} by ${Math.abs(margin)}`;
}

/** Bounds for people: "+3" when they meet, else "-2..+4". */
function boundsText(b) {
  return b.exact ? signed(b.lower) : `${signed(b.lower)}..${signed(b.upper)}`;
}

/** What bounds `b` of a move mean for the mover with the seeds captured. */
function boundsMeaning(b, s) {
  const d = s.stores[s.toMove] - s.stores[other(s.toMove)];
  if (d + b.lower > 0) return "win";
  if (d + b.upper < 0) return "loss";
  if (d + b.lower === 0 && d + b.upper === 0) return "draw";
  return "depends on the rule";
}

function moveName(side, pit) {
  return `${sideName(side)} ${pitLabel(side, pit)}`;
}

function draw() {
  const s = state;
  drawSeeds(s);
  document.body.classList.toggle("setup", setupMode);
  $("setup-panel").hidden = !setupMode;
  const legal = new Map((analysis?.moves ?? []).map((m) => [m.pit, m]));
  const over = analysis && analysis.moves.length === 0;
  for (const side of ["S", "N"]) {
    for (let i = 0; i < game.pits; i++) {
      const pit = $(`pit-${side}-${i}`);
      const badge = $(`badge-${side}-${i}`);
      const m = side === s.toMove ? legal.get(i) : undefined;
      pit.classList.toggle("best", !!m?.best);
      pit.classList.toggle("to-move", side === s.toMove);
      const bounded = m && m.lower !== undefined;
      const valued = m && m.value !== null && m.value !== undefined;
      badge.textContent = bounded ? boundsText(m) : valued ? signed(m.value) : m ? "?" : "";
      badge.className = "badge" + (m?.best ? " best" : "");
      if (valued) pit.dataset.value = m.value; else delete pit.dataset.value;
      let why = "";
      if (setupMode) why = "setting up: use + and −";
      else if (side !== s.toMove) why = `it is ${sideName(s.toMove)}'s turn`;
      else if (over) why = "the game is over";
      else if (s.rows[side][i] === 0) why = "the pit is empty";
      else if (analysis && !m) why = pit.dataset.why || "this move is not allowed";
      pit.disabled = why !== "" || busy;
      const what = bounded ? boundsMeaning(m, s) : valued ? meaning(m.value, s) : "value unknown";
      pit.title = why || `play ${moveName(side, i)}: ${what}`;
      pit.dataset.why = why;
    }
  }
  $("turn").textContent = `${sideName(s.toMove)} to move · captured: South ${s.stores.S}, North ${s.stores.N}`;
  drawAnalysis();
  drawHistory();
  $("undo").disabled = busy || at === 0;
  $("redo").disabled = busy || at >= history.length - 1;
  // (Bounds mark no best move: the machine plays from the even-split values.)
  $("machine-move").disabled = busy || setupMode || !analysis || analysis.moves.length === 0 ||
    analysis.repetition === "any";
  $("board").dataset.state = busy ? "busy" : "ready";
}

function drawAnalysis() {
  const s = state;
  const body = $("moves").querySelector("tbody");
  body.innerHTML = "";
  $("moves").querySelector("thead th:nth-child(2)").textContent =
    analysis?.repetition === "any" ? "Bounds" : "Value";
  if (!analysis) {
    $("value").textContent = "";
    $("pv").textContent = "";
    return;
  }
  if (analysis.repetition === "any") {
    drawBounds();
    return;
  }
  const total = s.stores[s.toMove] - s.stores[other(s.toMove)] + analysis.value;
  if (analysis.search) {
    // Above the levels built: a search, which says what it proved.
    const bound = { exact: "exact", lower: "at least", upper: "at most", estimate: "estimate" }[analysis.bound];
    $("value").innerHTML =
      `<span id="search-result">Search result</span> (depth ${analysis.depth}) for ${sideName(s.toMove)}: ` +
      `<b id="position-value">${signed(analysis.value)}</b> (${bound}); ` +
      `${analysis.result} ${analysis.result_proven ? "(proven)" : "(not proven)"}`;
  } else {
    $("value").innerHTML =
      `Value for ${sideName(s.toMove)}: <b id="position-value">${signed(analysis.value)}</b> ` +
      `(${analysis.result}${total ? " by " + Math.abs(total) : ""} with perfect play)`;
  }
  if (analysis.moves.length === 0) {
    $("value").innerHTML += ` · game over: ${sideName(s.toMove)} cannot move, ` +
      `${sideName(other(s.toMove))} takes the seeds left`;
  }
  for (const m of analysis.moves) {
    const row = document.createElement("tr");
    row.dataset.pit = m.pit;
    row.dataset.value = m.value ?? "";
    row.className = m.best ? "best" : "";
    // (A search values its best move only.)
    const known = m.value !== null && m.value !== undefined;
    row.innerHTML =
      `<td>${pitLabel(s.toMove, m.pit)}</td><td>${known ? signed(m.value) : "?"}</td>` +
      `<td>${known ? meaning(m.value, s) : "searched"}</td><td>${m.captured || ""}</td>` +
      `<td>${m.best ? "★ best" : ""}</td>`;
    body.appendChild(row);
  }
  // The sides alternate (a grand slam that keeps the turn, in grand-slam-replay,
  // is not shown: the answer gives pits only).
  let side = s.toMove;
  $("pv").textContent = analysis.pv
    .map((pit) => {
      const label = pitLabel(side, pit);
      side = other(side);
      return label;
    })
    .join(" ") + (analysis.pv.length ? ` (${analysis.pv_end})` : "—");
}

/** The analysis under any repetition rule: bounds for the position and each move. */
function drawBounds() {
  const s = state;
  const a = analysis;
  const body = $("moves").querySelector("tbody");
  const result = a.result === "depends" ? "the result depends on the repetition rule" : `${a.result} under every repetition rule`;
  $("value").innerHTML = a.exact
    ? `Value for ${sideName(s.toMove)}: <b id="position-value">${signed(a.lower)}</b> ` +
      `(the same under every repetition rule; ${result})`
    : `Bounds for ${sideName(s.toMove)}: <b id="position-value">${boundsText(a)}</b> ` +
      `(at least ${signed(a.lower)}, at most ${signed(a.upper)} whatever rule ends endless play; ${result})`;
  if (a.moves.length === 0) {
    $("value").innerHTML += ` · game over: ${sideName(s.toMove)} cannot move, ` +
      `${sideName(other(s.toMove))} takes the seeds left`;
  }
  for (const m of a.moves) {
    const row = document.createElement("tr");
    row.dataset.pit = m.pit;
    row.dataset.lower = m.lower;
    row.dataset.upper = m.upper;
    row.innerHTML =
      `<td>${pitLabel(s.toMove, m.pit)}</td><td>${boundsText(m)}</td>` +
      `<td>${boundsMeaning(m, s)}</td><td>${m.captured || ""}</td>` +
      `<td>${m.exact ? "same under every rule" : ""}</td>`;
    body.appendChild(row);
  }
  $("pv").textContent = "— (none under any repetition rule)";
}

function drawHistory() {
  const list = $("history");
  list.innerHTML = "";
  history.forEach((h, k) => {
    if (k === 0) return;
    const item = document.createElement("li");
    item.textContent = h.label;
    if (k > at) item.className = "undone";
    list.appendChild(item);
  });
}

function say(text, kind) {
  $("message").textContent = text;
  $("message").className = kind || "";
}

// ---- the game ----

/** Shows history[at]: fetches its analysis, then lets the machine move if it plays. */
async function show() {
  state = copy(history[at].state);
  analysis = null;
  busy = true;
  draw();
  try {
    analysis = await api(positionQuery(state));
    say("");
  } catch (err) {
    if (err.missingLevel !== undefined) {
      say(`Not in the database: level ${err.missingLevel} (positions with ${err.missingLevel} seeds ` +
        `on the board) is missing. ${err.message}`, "missing");
    } else {
      say(err.message, "error");
    }
  }
  busy = false;
  await explainDisabled();
  draw();
  machineTurn();
}

/** Asks the server why each non-empty pit that has no move cannot be played. */
async function explainDisabled() {
  if (!analysis || analysis.moves.length === 0) return;
  const legal = new Set(analysis.moves.map((m) => m.pit));
  const side = state.toMove;
  for (let i = 0; i < game.pits; i++) {
    const pit = $(`pit-${side}-${i}`);
    pit.dataset.why = "";
    if (legal.has(i) || state.rows[side][i] === 0) continue;
    try {
      await api("/api/play", playRequest(state, i));
    } catch (err) {
      pit.dataset.why = err.message;
    }
  }
}

function playRequest(s, pit) {
  return {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      board: moverBoard(s),
      captured: [s.stores[s.toMove], s.stores[other(s.toMove)]],
      pit,
      rules: game.rules,
    }),
  };
}

async function clickPit(side, pit) {
  if (busy || setupMode || side !== state.toMove) return;
  await play(pit);
}

/** Plays `pit` for the side to move: asks the server, animates, records. */
async function play(pit) {
  const before = copy(state);
  const mover = before.toMove;
  let result;
  busy = true;
  draw();
  try {
    result = await api("/api/play", playRequest(before, pit));
  } catch (err) {
    busy = false;
    say(err.message, "error");
    draw();
    return;
  }
  await animate(before, pit, result.sown);
  const next = result.turn === "stays" ? mover : other(mover);
  const after = fromMover(result.board, result.captured, next);
  let label = `${moveName(mover, pit)}`;
  if (result.seeds_captured) label += ` captures ${result.seeds_captured}`;
  history = history.slice(0, at + 1);
  history.push({ state: after, label });
  at = history.length - 1;
  busy = false;
  await show();
}

/** Sows seed by seed so that a person can follow the move. */
async function animate(before, pit, sown) {
  if (SOW_MS <= 0) return;
  const s = copy(before);
  const p = game.pits;
  const mover = s.toMove;
  s.rows[mover][pit] = 0;
  drawSeeds(s);
  const pitOf = (k) => (k < p ? [mover, k] : [other(mover), k - p]);
  for (const k of sown) {
    await new Promise((r) => setTimeout(r, SOW_MS));
    const [side, i] = pitOf(k);
    s.rows[side][i] += 1;
    drawSeeds(s);
    const el = $(`pit-${side}-${i}`);
    el.classList.add("sown");
    setTimeout(() => el.classList.remove("sown"), SOW_MS * 2);
  }
  await new Promise((r) => setTimeout(r, SOW_MS));
}

/** A best move for the machine: the first, as in the principal variation. */
async function machineMove() {
  const best = analysis?.moves.find((m) => m.best);
  if (best && !busy) await play(best.pit);
}

function machineTurn() {
  if (setupMode || !analysis || analysis.moves.length === 0 || analysis.repetition === "any") return;
  if ($(`machine-${state.toMove}`).checked) setTimeout(() => { if (!busy) machineMove(); }, 300);
}

function newGame() {
  const n = Number($("seeds-per-pit").value);
  if (!Number.isInteger(n) || n < 0 || n * 2 * game.pits > 64) {
    say(`seeds per pit: a whole number with at most 64 seeds on the board`, "error");
    return;
  }
  const rows = { S: Array(game.pits).fill(n), N: Array(game.pits).fill(n) };
  history = [{ state: { rows, stores: { S: 0, N: 0 }, toMove: "S" }, label: "" }];
  at = 0;
  setupMode = false;
  show();
}

function chooseGame() {
  game = games[Number($("game").value)];
  buildBoard();
  newGame();
}

// ---- setting up a position ----

function toggleSetup() {
  if (busy) return;
  setupMode = !setupMode;
  if (setupMode) {
    analysis = null;
    $("setup-store-S").value = state.stores.S;
    $("setup-store-N").value = state.stores.N;
    $("setup-to-move").value = state.toMove;
    say("Setting up a position.");
    draw();
  } else {
    setupDone();
  }
}

function edit(side, pit, delta) {
  if (!setupMode) return;
  const n = state.rows[side][pit] + delta;
  if (n < 0 || n > 48) return;
  state.rows[side][pit] = n;
  draw();
}

function setupDone() {
  const s = copy(state);
  s.stores.S = Math.max(0, Number($("setup-store-S").value) | 0);
  s.stores.N = Math.max(0, Number($("setup-store-N").value) | 0);
  s.toMove = $("setup-to-move").value;
  history = [{ state: s, label: "" }];
  at = 0;
  setupMode = false;
  show();
}

function clearBoard() {
  state.rows.S.fill(0);
  state.rows.N.fill(0);
  draw();
}

// ---- start ----

async function start() {
  $("new-game").addEventListener("click", newGame);
  $("setup").addEventListener("click", toggleSetup);
  $("setup-done").addEventListener("click", setupDone);
  $("setup-clear").addEventListener("click", clearBoard);
  $("undo").addEventListener("click", () => { if (!busy && at > 0) { at--; show(); } });
  $("redo").addEventListener("click", () => { if (!busy && at < history.length - 1) { at++; show(); } });
  $("machine-move").addEventListener("click", machineMove);
  $("machine-S").addEventListener("change", machineTurn);
  $("machine-N").addEventListener("change", machineTurn);
  $("game").addEventListener("change", chooseGame);
  $("repetition").value = repetition;
  $("repetition").addEventListener("change", () => {
    repetition = $("repetition").value;
    if (!busy && !setupMode) show();
  });
  try {
    games = (await api("/api/info")).games;
  } catch (err) {
    say(err.message, "error");
    return;
  }
  $("game").innerHTML = games
    .map((g, k) => {
      const bounds = g.bounds_complete_up_to == null ? "" : `, bounds to ${g.bounds_complete_up_to}`;
      return `<option value="${k}">${g.rules}, ${g.pits} pits (levels to ${g.complete_up_to ?? "-"}${bounds})</option>`;
    })
    .join("");
  // Start with the first game whose start position the database holds, if any.
  const k = Math.max(0, games.findIndex((g) => g.pits === 6));
  $("game").value = k;
  game = games[k];
  const fit = Math.floor((game.complete_up_to ?? 0) / (2 * game.pits));
  $("seeds-per-pit").value = Math.max(1, Math.min(4, fit));
  buildBoard();
  newGame();
}

start();
