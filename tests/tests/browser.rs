//! End-to-end in a real browser: `awari-probe serve` over a database built
//! here, the page driven in headless Chromium through WebDriver. Moves are
//! played by clicking pits; after each, the board, the stores and every
//! move's value shown must be the library's. Also: a search result is marked,
//! undo and redo, the machine's move, setting up a position. A screenshot is
//! saved under the target directory.
//!
//! Needs Debian's `chromium` and `chromium-driver` (`.ci/run` installs them).

use std::path::Path;
use std::time::Duration;

use awari_dbformat::{Board, Rules, Turn};
use awari_probe::Tablebase;
use awari_tests::server::Server;
use awari_tests::webdriver::Browser;
use awari_tests::{ok_stdout, run, scratch};
use serde_json::Value;

/// A position as the page draws it: South's and North's rows, stores, who moves.
#[derive(Clone, Debug, PartialEq)]
struct Shown {
    south: Vec<u8>,
    north: Vec<u8>,
    stores: (u32, u32),
    south_to_move: bool,
}

impl Shown {
    /// The board from the mover's side, the mover's captured seeds first.
    fn mover_view(&self) -> (Board, (u32, u32)) {
        let (mine, theirs, captured) = if self.south_to_move {
            (&self.south, &self.north, self.stores)
        } else {
            (&self.north, &self.south, (self.stores.1, self.stores.0))
        };
        let pits: Vec<u8> = mine.iter().chain(theirs).copied().collect();
        (Board::new(&pits).unwrap(), captured)
    }

    /// The position after the mover plays `pit`, by the library.
    fn after(&self, rules: Rules, pit: usize) -> Shown {
        let (board, (mover, opponent)) = self.mover_view();
        let m = rules.play(&board, pit).unwrap();
        let p = board.per_side() as usize;
        let mover = mover + u32::from(m.captured);
        let (next_south, next_captured) = match m.turn {
            Turn::Passes => (!self.south_to_move, (opponent, mover)),
            Turn::Stays => (self.south_to_move, (mover, opponent)),
        };
        let (first, second) = m.child.pits().split_at(p);
        let (south, north, stores) = if next_south {
            (first, second, next_captured)
        } else {
            (second, first, (next_captured.1, next_captured.0))
        };
        Shown {
            south: south.to_vec(),
            north: north.to_vec(),
            stores,
            south_to_move: next_south,
        }
    }
}

/// Reads what the page shows: the counts in the pits and stores, whose turn,
/// the value badges under the pits and the position's value.
fn read(browser: &Browser) -> (Shown, Vec<String>, Vec<String>, String) {
    let v = browser.run(
        "const p = document.querySelectorAll('#row-S .pit').length;
         const row = (s) => [...Array(p).keys()].map(i =>
            Number(document.querySelector(`#pit-${s}-${i} .count`).textContent));
         const badges = (s) => [...Array(p).keys()].map(i =>
            document.getElementById(`badge-${s}-${i}`).textContent);
         const store = (s) => Number(document.querySelector(`#store-${s} .count`).textContent);
         const value = document.getElementById('position-value');
         return {south: row('S'), north: row('N'), stores: [store('S'), store('N')],
                 turn: document.getElementById('turn').textContent,
                 badgesS: badges('S'), badgesN: badges('N'),
                 value: value ? value.textContent : ''};",
    );
    let nums = |key: &str| -> Vec<u8> {
        v[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u8)
            .collect()
    };
    let texts = |key: &str| -> Vec<String> {
        v[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect()
    };
    let shown = Shown {
        south: nums("south"),
        north: nums("north"),
        stores: (
            v["stores"][0].as_u64().unwrap() as u32,
            v["stores"][1].as_u64().unwrap() as u32,
        ),
        south_to_move: v["turn"].as_str().unwrap().starts_with("South"),
    };
    (
        shown,
        texts("badgesS"),
        texts("badgesN"),
        v["value"].as_str().unwrap().to_string(),
    )
}

fn signed(v: i8) -> String {
    if v > 0 {
        format!("+{v}")
    } else {
        v.to_string()
    }
}

/// Waits for the page to settle (no move animating, the analysis in).
fn wait_ready(browser: &Browser) {
    browser.wait_for(
        "return document.getElementById('board').dataset.state === 'ready';",
        Duration::from_secs(20),
    );
}

/// Asserts the page shows `want` and, under the mover's pits, the library's
/// value of every legal move (nothing under the others); returns the analysis.
fn check(browser: &Browser, tb: &Tablebase, want: &Shown) -> awari_probe::Analysis {
    wait_ready(browser);
    let (shown, badges_s, badges_n, value) = read(browser);
    assert_eq!(&shown, want, "the board shown");
    let (board, _) = shown.mover_view();
    let analysis = tb.analyse(&board).unwrap();
    let (mine, theirs) = if shown.south_to_move {
        (badges_s, badges_n)
    } else {
        (badges_n, badges_s)
    };
    let p = board.per_side() as usize;
    let expected: Vec<String> = (0..p)
        .map(|pit| {
            analysis
                .moves
                .iter()
                .find(|m| usize::from(m.mov.pit) == pit)
                .map_or(String::new(), |m| signed(m.value.get()))
        })
        .collect();
    assert_eq!(mine, expected, "the values shown for {board}");
    assert!(
        theirs.iter().all(String::is_empty),
        "values under the opponent's pits"
    );
    assert_eq!(value, signed(analysis.value.get()), "the position's value");
    analysis
}

fn pit_selector(south: bool, pit: usize) -> String {
    format!("#pit-{}-{pit}", if south { "S" } else { "N" })
}

fn title(browser: &Browser, css: &str) -> String {
    match browser.run(&format!("return document.querySelector('{css}').title;")) {
        Value::String(s) => s,
        other => panic!("no title for {css}: {other}"),
    }
}

#[test]
fn play_undo_set_up_in_a_real_browser() {
    let dir = scratch("browser");
    let db = dir.join("db");
    let d = db.to_str().unwrap();
    ok_stdout(&run(
        "awari-solve",
        &["--db", d, "--pits", "4", "--max-seeds", "16"],
    ));
    ok_stdout(&run("awari-solve", &["--db", d, "--max-seeds", "10"]));
    let rules = Rules::new(awari_dbformat::RuleSet::Awari, 4).unwrap();
    let tb = Tablebase::open(&db, rules).unwrap();

    let server = Server::start(&db);
    let browser = Browser::start(&dir.join("chromium-profile"));
    browser.goto(&format!("http://{}/?speed=40", server.addr));
    wait_ready(&browser);

    // The page opens on the 6-pit game, whose 1-seed start (12 seeds) is
    // beyond level 10: a search result, marked as one.
    let value = browser.find("#value").text();
    assert!(value.contains("Search result"), "{value}");
    assert_eq!(browser.find("#message").text(), "");

    // The 4-pit game with 2 seeds per pit.
    browser.find("#game option[value='0']").click();
    wait_ready(&browser);
    let seeds = browser.find("#seeds-per-pit");
    seeds.clear();
    seeds.send_keys("2");
    browser.find("#new-game").click();
    let mut want = Shown {
        south: vec![2; 4],
        north: vec![2; 4],
        stores: (0, 0),
        south_to_move: true,
    };
    let mut analysis = check(&browser, &tb, &want);
    assert_eq!(browser.find("#message").text(), "");

    // The opponent's pits cannot be played, and say why.
    assert_eq!(title(&browser, "#pit-N-0"), "it is South's turn");
    browser.find("#pit-N-0").click();
    check(&browser, &tb, &want);

    // Play five moves by clicking: best, a worst, best, best, best.
    let mut played = vec![want.clone()];
    for k in 0..5 {
        let pick = if k == 1 {
            analysis.moves.iter().min_by_key(|m| m.value).unwrap()
        } else {
            analysis.moves.iter().find(|m| m.best).unwrap()
        };
        let pit = usize::from(pick.mov.pit);
        browser.find(&pit_selector(want.south_to_move, pit)).click();
        want = want.after(rules, pit);
        analysis = check(&browser, &tb, &want);
        played.push(want.clone());
        if analysis.moves.is_empty() {
            break;
        }
    }
    assert!(
        played.len() >= 3,
        "the game lasted {} moves",
        played.len() - 1
    );

    // Undo twice, redo once.
    browser.find("#undo").click();
    check(&browser, &tb, &played[played.len() - 2]);
    browser.find("#undo").click();
    check(&browser, &tb, &played[played.len() - 3]);
    browser.find("#redo").click();
    want = played[played.len() - 2].clone();
    analysis = check(&browser, &tb, &want);

    // The machine plays a best move.
    if !analysis.moves.is_empty() {
        browser.find("#machine-move").click();
        let best = analysis.moves.iter().find(|m| m.best).unwrap();
        want = want.after(rules, usize::from(best.mov.pit));
        check(&browser, &tb, &want);
    }

    // Set up a position: South 2 0 0 1, North 0 3 1 0, captured 5 and 6, North to move.
    browser.find("#setup").click();
    browser.find("#setup-clear").click();
    for (side, pit, times) in [("S", 0, 2), ("S", 3, 1), ("N", 1, 3), ("N", 2, 1)] {
        for _ in 0..times {
            browser.find(&format!("#plus-{side}-{pit}")).click();
        }
    }
    browser.find("#plus-N-0").click();
    browser.find("#minus-N-0").click();
    for (id, n) in [("#setup-store-S", "5"), ("#setup-store-N", "6")] {
        let input = browser.find(id);
        input.clear();
        input.send_keys(n);
    }
    browser.find("#setup-to-move option[value='N']").click();
    browser.find("#setup-done").click();
    want = Shown {
        south: vec![2, 0, 0, 1],
        north: vec![0, 3, 1, 0],
        stores: (5, 6),
        south_to_move: false,
    };
    analysis = check(&browser, &tb, &want);
    assert_eq!(title(&browser, "#pit-N-0"), "the pit is empty");
    assert_eq!(browser.find("#history").text(), "");

    // With the machine playing South, North's move is answered at once.
    browser.find("#machine-S").click();
    let north = analysis.moves.iter().find(|m| m.best).unwrap();
    browser
        .find(&pit_selector(false, usize::from(north.mov.pit)))
        .click();
    want = want.after(rules, usize::from(north.mov.pit));
    if want.south_to_move {
        let (board, _) = want.mover_view();
        let reply = tb.analyse(&board).unwrap();
        if let Some(best) = reply.moves.iter().find(|m| m.best) {
            want = want.after(rules, usize::from(best.mov.pit));
            browser.wait_for(
                "return document.querySelectorAll('#history li').length === 2 &&
                        document.getElementById('board').dataset.state === 'ready';",
                Duration::from_secs(20),
            );
        }
    }
    check(&browser, &tb, &want);
    let history = browser.find("#history").text();
    assert!(history.contains("North"), "{history}");

    let shot = dir.join("awari-oracle.png");
    browser.screenshot(&shot);
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "a screenshot in {}",
        shot.display()
    );
    assert!(Path::new(&shot).starts_with(dir.parent().unwrap()));
    println!("screenshot: {}", shot.display());
}
