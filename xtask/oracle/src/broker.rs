//! The broker and the Java helper as child processes that are always stopped.
//!
//! Every JVM runs in its own process group, registered in [`CHILDREN`]: the guard's `Drop`
//! and the Ctrl-C handler kill the whole group. Every JVM is also started through the
//! helper's `oracle.Launcher`, which halts the JVM when its standard input (a pipe from this
//! process) reaches end of file, so a JVM never outlives xtask, however xtask ends.

use std::io::Write as _;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Process groups of the live children (killed by the Ctrl-C handler).
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Whether the Ctrl-C handler is installed (once per process, however many runs and jobs).
static CTRLC: std::sync::Once = std::sync::Once::new();

/// Installs the Ctrl-C handler (once per process, however often it is called): kill every
/// registered process group, then exit 130.
pub fn install_ctrlc() -> Result<(), String> {
    let mut result = Ok(());
    CTRLC.call_once(|| result = set_ctrlc());
    result
}

fn set_ctrlc() -> Result<(), String> {
    ctrlc::set_handler(|| {
        let groups = CHILDREN.lock().map(|g| g.clone()).unwrap_or_default();
        for g in groups {
            kill_group(g, "KILL");
        }
        eprintln!("xtask kafka: interrupted; every JVM it started was killed");
        std::process::exit(130);
    })
    .map_err(|e| format!("cannot install the Ctrl-C handler: {e}"))
}

fn kill_group(pgid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args(["-s", signal, "--", &format!("-{pgid}")])
        .stderr(Stdio::null())
        .status();
}

/// The Java side: the `java` binary, the classpath (helper jar + Kafka's jars) and the
/// log4j2 configuration for client processes.
#[derive(Clone, Debug)]
pub struct Jvm {
    pub classpath: String,
    pub client_log4j: PathBuf,
}

/// What a JVM run printed: both streams, whole.
#[derive(Clone, Debug, Default)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    /// The exit status (`None`: killed by a signal).
    pub status: Option<i32>,
}

/// A running JVM in its own process group. Dropping it kills the group and reaps it.
pub struct Proc {
    child: Option<Child>,
    pgid: u32,
    name: String,
}

impl Proc {
    fn register(child: Child, name: &str) -> Proc {
        let pgid = child.id();
        CHILDREN.lock().unwrap().push(pgid);
        Proc {
            child: Some(child),
            pgid,
            name: name.to_string(),
        }
    }

    /// `kill -9` of the whole group, then reaps the process.
    pub fn kill9(&mut self) {
        kill_group(self.pgid, "KILL");
        if let Some(mut c) = self.child.take() {
            let _ = c.wait();
        }
        CHILDREN.lock().unwrap().retain(|g| *g != self.pgid);
    }

    /// SIGTERM (the broker's controlled shutdown), up to `timeout` to exit, then SIGKILL.
    /// Returns whether it exited by itself in time.
    pub fn stop(&mut self, timeout: Duration) -> bool {
        let Some(mut c) = self.child.take() else {
            return true;
        };
        kill_group(self.pgid, "TERM");
        let deadline = Instant::now() + timeout;
        let clean = loop {
            match c.try_wait() {
                Ok(Some(_)) => break true,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(100))
                }
                _ => break false,
            }
        };
        kill_group(self.pgid, "KILL");
        let _ = c.wait();
        CHILDREN.lock().unwrap().retain(|g| *g != self.pgid);
        if !clean {
            eprintln!(
                "xtask kafka: {} did not stop in {timeout:?}; killed",
                self.name
            );
        }
        clean
    }

    /// Waits for the process to exit by itself (up to `timeout`, then kills it).
    pub fn wait(&mut self, timeout: Duration) -> Result<std::process::ExitStatus, String> {
        let Some(c) = self.child.as_mut() else {
            return Err(format!("{} was already stopped", self.name));
        };
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = c.try_wait().map_err(|e| e.to_string())? {
                self.child = None;
                CHILDREN.lock().unwrap().retain(|g| *g != self.pgid);
                return Ok(s);
            }
            if Instant::now() > deadline {
                self.kill9();
                return Err(format!(
                    "{} did not finish in {timeout:?}; killed",
                    self.name
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Mutable access to the child (its stdout, for the helper's "OPEN" line).
    pub fn child_mut(&mut self) -> Option<&mut Child> {
        self.child.as_mut()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.child.is_some() {
            self.kill9();
        }
    }
}

impl Jvm {
    /// A `java` command running `main` through the launcher, in its own process group,
    /// with a small heap and fast-start flags.
    fn command(&self, heap: &str, log4j: &Path, main: &str) -> Command {
        let mut c = Command::new("java");
        c.arg(format!("-Xmx{heap}"))
            .args([
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Xss512k",
                "-Djava.awt.headless=true",
            ])
            .arg(format!("-Dlog4j2.configurationFile={}", log4j.display()))
            .arg("-cp")
            .arg(&self.classpath)
            .arg("oracle.Launcher")
            .arg(main)
            .stdin(Stdio::piped())
            .process_group(0);
        c
    }

    /// Runs a helper or tool main class to completion; returns its stdout. A non-zero exit
    /// or a run longer than `timeout` is an error carrying stderr.
    ///
    /// Stderr is dropped on success: use [`Jvm::run_full`] for a tool that reports its
    /// findings there (Kafka's `DumpLogSegments` prints every mismatch to stderr and exits 0).
    pub fn run(&self, main: &str, args: &[String], timeout: Duration) -> Result<String, String> {
        self.run_full(main, args, timeout).map(|o| o.stdout)
    }

    /// Runs a helper or tool main class to completion; returns both of its streams. A
    /// non-zero exit or a run longer than `timeout` is an error carrying both tails.
    pub fn run_full(
        &self,
        main: &str,
        args: &[String],
        timeout: Duration,
    ) -> Result<Output, String> {
        self.run_output(main, args, timeout, true)
    }

    /// [`Jvm::run_full`], but a non-zero exit status is not an error: the output of a
    /// tool that stopped with an exception (Kafka's `DumpLogSegments` on a corrupt
    /// index) is still returned. A timeout still is an error.
    pub fn run_any_status(
        &self,
        main: &str,
        args: &[String],
        timeout: Duration,
    ) -> Result<Output, String> {
        self.run_output(main, args, timeout, false)
    }

    fn run_output(
        &self,
        main: &str,
        args: &[String],
        timeout: Duration,
        require_success: bool,
    ) -> Result<Output, String> {
        let mut c = self.command("256m", &self.client_log4j, main);
        c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
        let child = c.spawn().map_err(|e| format!("cannot start java: {e}"))?;
        let mut p = Proc::register(child, main);
        // Read both pipes on threads so a chatty tool never blocks.
        let child = p.child_mut().expect("just started");
        let mut out = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        let t_out = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut out, &mut s);
            s
        });
        let t_err = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut err, &mut s);
            s
        });
        let status = p.wait(timeout);
        let out = t_out.join().unwrap_or_default();
        let err = t_err.join().unwrap_or_default();
        match status {
            Ok(s) if s.success() || !require_success => Ok(Output {
                stdout: out,
                stderr: err,
                status: s.code(),
            }),
            Ok(s) => Err(format!(
                "{main} {} exited with {s}:\n{}{}",
                args.join(" "),
                tail(&out, 20),
                tail(&err, 40)
            )),
            Err(e) => Err(format!("{e}:\n{}", tail(&err, 40))),
        }
    }

    /// Starts a long-lived helper server for measurements (`cargo xtask vs-kafka`):
    /// stdin and stdout piped (its command protocol), stderr inherited, in its own process
    /// group, registered for the Ctrl-C handler. Unlike [`Jvm::command`] it runs with the
    /// JIT's full tiers (no `TieredStopAtLevel=1`) and **without** the launcher, whose
    /// watchdog would consume stdin: the server itself exits at the end of its stdin,
    /// so it does not outlive xtask either. `prefix` runs it under another command
    /// (`taskset -c N`).
    pub fn spawn_server(&self, heap: &str, main: &str, prefix: &[String]) -> Result<Proc, String> {
        let mut c = match prefix.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg("java");
                c
            }
            None => Command::new("java"),
        };
        c.arg(format!("-Xms{heap}"))
            .arg(format!("-Xmx{heap}"))
            .arg("-Djava.awt.headless=true")
            .arg(format!(
                "-Dlog4j2.configurationFile={}",
                self.client_log4j.display()
            ))
            .arg("-cp")
            .arg(&self.classpath)
            .arg(main)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0);
        let child = c.spawn().map_err(|e| format!("cannot start java: {e}"))?;
        Ok(Proc::register(child, main))
    }

    /// Starts a helper main class in the background (stdout piped).
    pub fn spawn(&self, main: &str, args: &[String]) -> Result<Proc, String> {
        let mut c = self.command("256m", &self.client_log4j, main);
        c.args(args).stdout(Stdio::piped()).stderr(Stdio::null());
        let child = c.spawn().map_err(|e| format!("cannot start java: {e}"))?;
        Ok(Proc::register(child, main))
    }
}

/// Last `n` lines of `s`.
pub fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    let from = lines.len().saturating_sub(n);
    let mut t = lines[from..].join("\n");
    if !t.is_empty() {
        t.push('\n');
    }
    t
}

/// The ports [`free_port`] has handed out in this process.
static GIVEN: Mutex<Vec<u16>> = Mutex::new(Vec::new());

/// The lowest port [`free_port`] draws from below the kernel's ephemeral range.
const LOW_PORT: u16 = 10_000;

/// A free loopback port, never one this process has handed out before: the jobs of a run
/// start brokers at once, and a port one job was given but has not bound yet (or bound,
/// lost to `kill -9` and binds again at the restart) must not go to another. It is drawn
/// below the kernel's ephemeral range (`net.ipv4.ip_local_port_range`), where no
/// outgoing connection of another JVM takes it meanwhile, and checked free by binding it;
/// when that range leaves no room, the kernel's choice (port 0) is taken instead.
pub fn free_port() -> Result<u16, String> {
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(0);
    if ephemeral_low > LOW_PORT + 1_000 {
        let span = u32::from(ephemeral_low - LOW_PORT);
        // A start that differs between processes (two runs on one machine), then a walk.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let start = (nanos ^ std::process::id().wrapping_mul(2_654_435_761)) % span;
        // A prime step visits every port of the span unless the span is its multiple.
        let step = if span % 7919 == 0 { 1 } else { 7919 };
        for i in 0..span {
            let port = LOW_PORT + ((start + i * step) % span) as u16;
            if !given.contains(&port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
                given.push(port);
                return Ok(port);
            }
        }
    }
    for _ in 0..64 {
        let l = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind 127.0.0.1:0: {e}"))?;
        let port = l.local_addr().map_err(|e| e.to_string())?.port();
        if !given.contains(&port) {
            given.push(port);
            return Ok(port);
        }
    }
    Err("no loopback port this process has not handed out before, in 64 tries".into())
}

/// Fixed KRaft cluster id (base64 of 16 bytes) of every test broker.
pub const CLUSTER_ID: &str = "a3NpLXhUYXNrLWthZmthLQ";

/// How a KRaft node takes part in the quorum.
#[derive(Clone, Copy, Debug)]
pub enum Quorum {
    /// Broker and controller in one JVM, the quorum's only voter (the single-node broker of
    /// every scenario but `k5-cluster`, and that cluster's controller node).
    Own,
    /// Broker only (`process.roles=broker`), joining the controller `id` that listens on
    /// `127.0.0.1:port`.
    Join { id: u32, port: u16 },
}

/// A KRaft node of a test cluster: its id, its part in the quorum, its maximum heap.
#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub id: u32,
    pub quorum: Quorum,
    /// `-Xmx` of its JVM, e.g. `"512m"`.
    pub heap: &'static str,
}

impl Node {
    /// The single-node broker: node 1, its own controller, 512 MiB of heap.
    pub const SINGLE: Node = Node {
        id: 1,
        quorum: Quorum::Own,
        heap: "512m",
    };
}

/// A KRaft broker with its files under `home`: `server.properties`, `log4j2.properties`,
/// `server.log`, `data/` (log dir). By default ([`Broker::create`]) a single node, broker
/// and controller in one JVM; [`Broker::create_node`] makes a node of a cluster.
pub struct Broker {
    pub home: PathBuf,
    pub port: u16,
    /// The port of the quorum's controller (this node's own for [`Quorum::Own`]).
    pub controller_port: u16,
    pub node: Node,
    proc: Option<Proc>,
    jvm: Jvm,
}

impl Broker {
    /// Writes the configuration and formats the storage (`kafka.tools.StorageTool format`)
    /// of a single-node broker. `extra` lines are appended to server.properties.
    pub fn create(jvm: &Jvm, home: &Path, extra: &[&str]) -> Result<Broker, String> {
        Broker::create_node(jvm, home, Node::SINGLE, extra)
    }

    /// As [`Broker::create`], for a node of a cluster: its id and quorum part from `node`.
    pub fn create_node(
        jvm: &Jvm,
        home: &Path,
        node: Node,
        extra: &[&str],
    ) -> Result<Broker, String> {
        std::fs::create_dir_all(home.join("data")).map_err(|e| e.to_string())?;
        let port = free_port()?;
        let controller_port = match node.quorum {
            Quorum::Join { port: p, .. } => p,
            Quorum::Own => {
                let mut p = free_port()?;
                while p == port {
                    p = free_port()?;
                }
                p
            }
        };
        let b = Broker {
            home: home.to_path_buf(),
            port,
            controller_port,
            node,
            proc: None,
            jvm: jvm.clone(),
        };
        b.write_config(extra)?;
        let log4j = home.join("log4j2.properties");
        std::fs::write(
            &log4j,
            format!(
                "status = warn\n\
                 appender.file.type = File\n\
                 appender.file.name = FILE\n\
                 appender.file.fileName = {}\n\
                 appender.file.append = true\n\
                 appender.file.layout.type = PatternLayout\n\
                 appender.file.layout.pattern = [%d] %p %m (%c)%n\n\
                 rootLogger.level = INFO\n\
                 rootLogger.appenderRef.file.ref = FILE\n",
                home.join("server.log").display()
            ),
        )
        .map_err(|e| e.to_string())?;
        jvm.run(
            "kafka.tools.StorageTool",
            &[
                "format".into(),
                "-t".into(),
                CLUSTER_ID.into(),
                "-c".into(),
                home.join("server.properties").display().to_string(),
            ],
            Duration::from_secs(120),
        )?;
        Ok(b)
    }

    /// (Re)writes server.properties with the current ports.
    fn write_config(&self, extra: &[&str]) -> Result<(), String> {
        let (port, cport, id) = (self.port, self.controller_port, self.node.id);
        let (roles, voter, listeners) = match self.node.quorum {
            Quorum::Own => (
                "broker,controller",
                id,
                format!("PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}"),
            ),
            Quorum::Join { id: c, .. } => ("broker", c, format!("PLAINTEXT://127.0.0.1:{port}")),
        };
        let mut props = format!(
            "process.roles={roles}\n\
             node.id={id}\n\
             controller.quorum.voters={voter}@127.0.0.1:{cport}\n\
             listeners={listeners}\n\
             advertised.listeners=PLAINTEXT://127.0.0.1:{port}\n\
             controller.listener.names=CONTROLLER\n\
             inter.broker.listener.name=PLAINTEXT\n\
             listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n\
             log.dirs={}\n\
             num.partitions=1\n\
             offsets.topic.replication.factor=1\n\
             offsets.topic.num.partitions=1\n\
             transaction.state.log.replication.factor=1\n\
             transaction.state.log.min.isr=1\n\
             transaction.state.log.num.partitions=1\n\
             group.initial.rebalance.delay.ms=0\n\
             num.network.threads=2\n\
             num.io.threads=2\n\
             background.threads=2\n\
             num.recovery.threads.per.data.dir=1\n\
             log.cleaner.enable=false\n\
             auto.create.topics.enable=false\n\
             transaction.remove.expired.transaction.cleanup.interval.ms=3600000\n",
            self.home.join("data").display()
        );
        for e in extra {
            props.push_str(e);
            props.push('\n');
        }
        std::fs::write(self.home.join("server.properties"), props).map_err(|e| e.to_string())
    }

    /// The broker's log directory.
    pub fn data(&self) -> PathBuf {
        self.home.join("data")
    }

    /// `127.0.0.1:port`.
    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The broker's server.log so far.
    pub fn server_log(&self) -> String {
        std::fs::read_to_string(self.home.join("server.log")).unwrap_or_default()
    }

    /// Starts `kafka.Kafka` and waits until it logs that it started and its port accepts
    /// connections.
    pub fn start(&mut self) -> Result<(), String> {
        if self.proc.is_some() {
            return Err("broker already running".into());
        }
        let log_len = self.server_log().len();
        let mut c = self.jvm.command(
            self.node.heap,
            &self.home.join("log4j2.properties"),
            "kafka.Kafka",
        );
        c.arg(self.home.join("server.properties"))
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(self.home.join("stderr.log")).map_err(|e| e.to_string())?,
            ));
        let child = c
            .spawn()
            .map_err(|e| format!("cannot start the broker: {e}"))?;
        let mut p = Proc::register(child, &format!("broker {}", self.node.id));
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Some(c) = p.child_mut() {
                if let Ok(Some(s)) = c.try_wait() {
                    return Err(format!(
                        "the broker exited with {s} while starting:\n{}{}",
                        tail(&self.server_log(), 30),
                        tail(
                            &std::fs::read_to_string(self.home.join("stderr.log"))
                                .unwrap_or_default(),
                            20
                        )
                    ));
                }
            }
            let started = self.server_log()[log_len..].contains("Kafka Server started");
            if started && TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                break;
            }
            if Instant::now() > deadline {
                p.kill9();
                return Err(format!(
                    "the broker did not start in 120 s:\n{}",
                    tail(&self.server_log(), 30)
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        self.proc = Some(p);
        Ok(())
    }

    /// Controlled shutdown (SIGTERM); an error if it needed SIGKILL.
    pub fn stop(&mut self) -> Result<(), String> {
        match self.proc.take() {
            Some(mut p) => {
                if p.stop(Duration::from_secs(60)) {
                    Ok(())
                } else {
                    Err("the broker did not shut down cleanly in 60 s".into())
                }
            }
            None => Ok(()),
        }
    }

    /// `kill -9`.
    pub fn kill9(&mut self) {
        if let Some(mut p) = self.proc.take() {
            p.kill9();
        }
    }

    /// Points the broker at another log directory copy (after a stop or kill).
    pub fn set_data(&mut self, data: &Path) -> Result<(), String> {
        let text = std::fs::read_to_string(self.home.join("server.properties"))
            .map_err(|e| e.to_string())?;
        let text: String = text
            .lines()
            .map(|l| {
                if l.starts_with("log.dirs=") {
                    format!("log.dirs={}\n", data.display())
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        let mut f = std::fs::File::create(self.home.join("server.properties"))
            .map_err(|e| e.to_string())?;
        f.write_all(text.as_bytes()).map_err(|e| e.to_string())
    }
}
