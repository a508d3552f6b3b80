//! `awari-probe serve` run by a test: started on a free port of 127.0.0.1,
//! stopped when dropped.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::binary;

/// A running server.
pub struct Server {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl Server {
    /// Starts `awari-probe serve --db dir --addr 127.0.0.1:0` and reads the
    /// address it prints.
    ///
    /// # Panics
    /// When it does not start.
    pub fn start(db: &Path) -> Server {
        let mut child = Command::new(binary("awari-probe"))
            .args(["serve", "--db"])
            .arg(db)
            .args(["--addr", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start awari-probe serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the server's first line");
        // "awari-probe serve: open http://127.0.0.1:PORT/ (database ...)"
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("no address in {line:?}"));
        Server { child, addr }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
