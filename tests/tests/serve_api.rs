//! End-to-end: `awari-probe serve` over a database built here. Its
//! `/api/position` answers equal `awari-probe score --json`, `/api/play` plays
//! as the library does, and malformed requests get 400 with a message.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::OnceLock;

use awari_dbformat::{Board, RuleSet, Rules, Turn};
use awari_tests::http::{encode, get, post};
use awari_tests::server::Server;
use awari_tests::{ok_stdout, run, scratch};
use serde_json::{json, Value};

/// Levels 0..=14 of the 6-pit awari game, 0..=12 of the 4-pit abapa game and
/// 0..=12 of the 5-pit cross-wari game.
fn db() -> &'static PathBuf {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| {
        let dir = scratch("serve-db");
        let d = dir.to_str().unwrap();
        ok_stdout(&run("awari-solve", &["--db", d, "--max-seeds", "14"]));
        ok_stdout(&run(
            "awari-solve",
            &[
                "--db",
                d,
                "--pits",
                "4",
                "--rules",
                "abapa",
                "--max-seeds",
                "12",
            ],
        ));
        ok_stdout(&run(
            "awari-solve",
            &[
                "--db",
                d,
                "--pits",
                "5",
                "--rules",
                "cross-wari",
                "--max-seeds",
                "12",
            ],
        ));
        dir
    })
}

/// A small deterministic generator (xorshift), for sample positions.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A board of `pits` per side holding `seeds` seeds, scattered at random.
    fn board(&mut self, pits: usize, seeds: u32) -> Board {
        let mut counts = vec![0u8; 2 * pits];
        for _ in 0..seeds {
            counts[(self.next() % (2 * pits) as u64) as usize] += 1;
        }
        Board::new(&counts).unwrap()
    }
}

fn position_target(board: &Board, captured: (u32, u32), rules: Option<&str>) -> String {
    let mut target = format!(
        "/api/position?board={}&captured={},{}",
        encode(&board.to_notation()),
        captured.0,
        captured.1
    );
    if let Some(r) = rules {
        target += &format!("&rules={r}");
    }
    target
}

#[test]
fn positions_equal_score_json() {
    let server = Server::start(db());
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut samples = Vec::new();
    for k in 0..30u32 {
        samples.push((random.board(6, k % 15), None));
    }
    for k in 0..12u32 {
        samples.push((random.board(4, k % 13), Some("abapa")));
    }
    for k in 0..12u32 {
        samples.push((random.board(5, 1 + k % 12), Some("cross-wari")));
    }
    samples.push(("1 1 1 1 1 0 / 4 2 3 0 0 0".parse().unwrap(), Some("awari")));
    samples.push(("2 2 2 2 2 2 / 0 0 0 0 0 0".parse().unwrap(), None));
    for (board, rules) in samples {
        let captured = ((random.next() % 20) as u32, (random.next() % 20) as u32);
        let api = get(server.addr, &position_target(&board, captured, rules));
        assert_eq!(api.status, 200, "{board}: {}", api.json());
        let notation = board.to_notation();
        let captured_arg = format!("{},{}", captured.0, captured.1);
        let d = db().to_str().unwrap();
        let mut args = vec![
            "score",
            &notation,
            "--db",
            d,
            "--json",
            "--captured",
            &captured_arg,
        ];
        if let Some(r) = rules {
            args.extend(["--rules", r]);
        }
        let cli: Value = serde_json::from_str(&ok_stdout(&run("awari-probe", &args))).unwrap();
        assert_eq!(api.json(), cli, "{board} captured {captured:?}");
    }
}

#[test]
fn play_moves_as_the_library() {
    let server = Server::start(db());
    let mut random = Random(12345);
    for (pits, set) in [
        (6, RuleSet::Awari),
        (4, RuleSet::Abapa),
        (5, RuleSet::CrossWari),
    ] {
        let rules = Rules::new(set, pits as u8).unwrap();
        for k in 0..20u32 {
            let board = random.board(pits, 1 + k % 12);
            for pit in 0..pits {
                let body = json!({"board": board.to_notation(), "captured": [5, 7], "pit": pit, "rules": set.name()});
                let answer = post(server.addr, "/api/play", body.to_string().as_bytes());
                match rules.play(&board, pit) {
                    Ok(m) => {
                        assert_eq!(answer.status, 200, "{board} {pit}: {}", answer.json());
                        let a = answer.json();
                        assert_eq!(a["board"], json!(m.child.pits()), "{board} {pit}");
                        let mover = 5 + u32::from(m.captured);
                        let captured = match m.turn {
                            Turn::Passes => json!([7, mover]),
                            Turn::Stays => json!([mover, 7]),
                        };
                        assert_eq!(a["captured"], captured);
                        // The pits sown, one seed each, make the board before
                        // any capture: it holds the child's seeds and those captured.
                        let mut pits = board.pits().to_vec();
                        pits[pit] = 0;
                        let sown = a["sown"].as_array().unwrap();
                        assert_eq!(sown.len(), board.pit(pit) as usize);
                        for to in sown {
                            pits[to.as_u64().unwrap() as usize] += 1;
                        }
                        let child = match m.turn {
                            Turn::Passes => m.child.swapped(),
                            Turn::Stays => m.child,
                        };
                        assert_eq!(
                            &pits[..pits.len() / 2],
                            child.mover_row(),
                            "{board} {pit}: {sown:?}"
                        );
                    }
                    Err(e) => {
                        assert_eq!(answer.status, 400, "{board} {pit}");
                        assert_eq!(answer.json()["error"], json!(e.to_string()));
                    }
                }
            }
        }
    }
}

/// Asserts `status` and a JSON body with a non-empty error message.
fn assert_error(addr: SocketAddr, method: &str, target: &str, body: &[u8], status: u16) {
    let answer = match method {
        "GET" => get(addr, target),
        _ => post(addr, target, body),
    };
    let shown = &target[..target.len().min(80)];
    assert_eq!(
        answer.status,
        status,
        "{method} {shown}: {:?}",
        String::from_utf8_lossy(&answer.body[..answer.body.len().min(300)])
    );
    let message = answer.json()["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!message.is_empty(), "{method} {shown}: no message");
    assert!(
        message.len() < 2000,
        "{method} {shown}: a message of {} bytes",
        message.len()
    );
}

#[test]
fn malformed_requests_get_400_and_a_message() {
    let server = Server::start(db());
    let a = server.addr;
    // Past the 16 KiB the API takes, below the HTTP layer's 64 KiB.
    let huge_board = "1+".repeat(12_000);
    let bad_queries = [
        "/api/position".to_string(),
        "/api/position?board=".to_string(),
        "/api/position?board=1+2+x+4+5+6+7+8+9+0+1+2".to_string(),
        "/api/position?board=1+1+1".to_string(),
        "/api/position?board=-1+1+1+1+1+1+1+1+1+1+1+1".to_string(),
        "/api/position?board=1+1+1+/+1+1".to_string(),
        "/api/position?board=49+0+0+0+0+0+0+0+0+0+0+0".to_string(),
        // 3 pits per side: no such game in the database.
        "/api/position?board=1+1+1+1+1+1".to_string(),
        "/api/position?board=1+1+1+1+1+1+1+1+1+1+1+1&rules=foo".to_string(),
        "/api/position?board=1+1+1+1+1+1+1+1+1+1+1+1&rules=grand-slam-replay".to_string(),
        "/api/position?board=1+1+1+1+1+1+1+1+1+1+1+1&captured=1,2,3".to_string(),
        "/api/position?board=1+1+1+1+1+1+1+1+1+1+1+1&captured=a,b".to_string(),
        "/api/position?board=1+1+1+1+1+1+1+1+1+1+1+1&captured=99999999999,0".to_string(),
        "/api/position?board=1+1+1+1+1+1+1+1+1+1+1+1&pv_limit=100000000".to_string(),
        "/api/position?board=1+1+1+1+1+1+1+1+1+1+1+1&colour=red".to_string(),
        format!("/api/position?board={huge_board}"),
        "/api/position?board=1+1+1+1+1+1+1+1+1+1+1+1&repetition=twice".to_string(),
        // A history is for the rules of play only, and made of boards.
        "/api/position?board=1+1+1+1+1+1+1+1+1+1+1+1&history=1+1+1+1+1+1+1+1+1+1+2+0".to_string(),
        "/api/position?board=1+1+1+1+1+1+1+1+1+1+1+1&repetition=own-rows&history=1+x".to_string(),
    ];
    for target in &bad_queries {
        assert_error(a, "GET", target, b"", 400);
    }
    // Over the limit, yet small enough to be sent whole before the server
    // answers (a larger one can meet a closed connection mid-write).
    let huge_body = format!("{{\"board\": \"{}\", \"pit\": 0}}", "1 ".repeat(1_500));
    let bad_bodies: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"not json".to_vec(),
        br#"{"board": "1 1 1 1 1 1 / 1 1 1 1 1 1"}"#.to_vec(),
        br#"{"board": "1 1 1 1 1 1 / 1 1 1 1 1 1", "pit": 6}"#.to_vec(),
        br#"{"board": "1 1 1 1 1 1 / 1 1 1 1 1 1", "pit": -1}"#.to_vec(),
        br#"{"board": "1 1 1 1 1 1 / 1 1 1 1 1 1", "pit": "Z"}"#.to_vec(),
        br#"{"board": "0 1 1 1 1 1 / 1 1 1 1 1 1", "pit": "A"}"#.to_vec(),
        br#"{"board": "1 1 1 1 1 1 / 1 1 1 1 1 1", "pit": 0, "rules": "foo"}"#.to_vec(),
        br#"{"board": "1 1 x", "pit": 0}"#.to_vec(),
        br#"{"board": [1, 1, 1], "pit": 0}"#.to_vec(),
        br#"{"board": [300, 1, 1, 1], "pit": 0}"#.to_vec(),
        br#"{"board": "1 1 1 1 1 1 / 1 1 1 1 1 1", "pit": 0, "captured": [1]}"#.to_vec(),
        br#"{"board": "1 1 1 1 1 1 / 1 1 1 1 1 1", "pit": 0, "extra": 1}"#.to_vec(),
        // Awari rules: A would leave the opponent without seeds while F does not.
        br#"{"board": "1 0 0 0 0 1 / 0 0 0 0 0 0", "pit": "A"}"#.to_vec(),
        huge_body.into_bytes(),
    ];
    for body in &bad_bodies {
        let shown = String::from_utf8_lossy(&body[..body.len().min(80)]).to_string();
        let answer = post(a, "/api/play", body);
        assert_eq!(
            answer.status,
            400,
            "POST {shown}: {}",
            String::from_utf8_lossy(&answer.body[..answer.body.len().min(300)])
        );
        assert!(
            answer.json()["error"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "POST {shown}"
        );
    }
    // Past 64 KiB the HTTP layer refuses the address itself (414, no JSON).
    let enormous = format!("/api/position?board={}", "1+".repeat(50_000));
    // Under own rows the position is searched with its history.
    let answer = get(
        a,
        "/api/position?board=1+0+0+0+0+1+0+0+0+1+0+1&repetition=own-rows&history=1+0+0+0+1+0+/+0+0+0+1+1+0&time=100ms",
    );
    assert_eq!(answer.status, 200);
    let json = answer.json();
    assert_eq!(json["repetition"], "own-rows");
    assert_eq!(json["search"], true);
    assert_eq!(get(a, &enormous).status, 414);
    assert_error(a, "GET", "/no/such/page", b"", 404);
    assert_error(a, "GET", "/api/play", b"", 405);
    // A position beyond the levels built is answered by a search, which
    // says what it proved; its time is bounded.
    let answer = get(a, "/api/position?board=2+2+2+2+2+2+2+2+2+2+2+2&time=200ms");
    assert_eq!(answer.status, 200);
    let searched = answer.json();
    assert_eq!(searched["search"], json!(true), "{searched}");
    assert!(searched["bound"].is_string() && searched["depth"].as_u64().unwrap() >= 1);
    let moves = searched["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 6);
    assert_eq!(moves.iter().filter(|m| m["best"] == json!(true)).count(), 1);
    assert_error(
        a,
        "GET",
        "/api/position?board=2+2+2+2+2+2+2+2+2+2+2+2&time=1h",
        b"",
        400,
    );
    assert_error(
        a,
        "GET",
        "/api/position?board=2+2+2+2+2+2+2+2+2+2+2+2&time=soon",
        b"",
        400,
    );
    // The server is still up and answers.
    assert_eq!(get(a, "/api/info").status, 200);
}

#[test]
fn info_lists_the_games_and_the_page_loads_nothing_from_the_network() {
    let server = Server::start(db());
    let info = get(server.addr, "/api/info").json();
    let games = info["games"].as_array().unwrap();
    let names: Vec<(String, u64, u64)> = games
        .iter()
        .map(|g| {
            (
                g["rules"].as_str().unwrap().to_string(),
                g["pits"].as_u64().unwrap(),
                g["complete_up_to"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("awari".to_string(), 6, 14),
            ("abapa".to_string(), 4, 12),
            ("cross-wari".to_string(), 5, 12)
        ]
    );
    assert_eq!(games[0]["levels"], json!((0..=14).collect::<Vec<_>>()));
    for path in ["/", "/app.js", "/style.css"] {
        let page = get(server.addr, path);
        assert_eq!(page.status, 200, "{path}");
        let text = String::from_utf8(page.body).unwrap();
        assert!(
            !text.contains("http://") && !text.contains("https://") && !text.contains("//cdn"),
            "{path} names a network address"
        );
    }
}
