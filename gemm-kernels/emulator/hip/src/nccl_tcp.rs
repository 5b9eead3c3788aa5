//! The cross-process transport of the emulated RCCL: communicators whose ranks live in different
//! processes (one emulated GPU each, as a pipeline runs one process per GPU) and talk over TCP.
//!
//! Why TCP on localhost: it is the transport real NCCL/RCCL bootstrap with, so the code path is
//! the one that would cross machines (`GEMM_EMU_NCCL_HOST` names the address to advertise), and
//! a rank that dies closes its sockets, so its peers see it at once instead of waiting out a
//! timeout.
//!
//! * `ncclGetUniqueId` (with `nccl=tcp` in the spec) opens the **root**: a listener on an
//!   ephemeral port and a thread that waits for the ranks. The 128-byte id carries a magic, a
//!   random nonce, the root's IPv4 address and port, and a checksum — nothing else crosses the
//!   process boundary before the ranks connect.
//! * `ncclCommInitRank` with such an id: the rank opens its own listener, says hello to the root
//!   (nonce, nranks, rank, its address), and gets back every rank's address once all have
//!   joined; then it connects to the lower ranks and accepts the higher ones (a full mesh). The
//!   root checks the nonce (a stale id that reaches another root is refused), that nranks
//!   agree and that no rank joins twice; an id whose root is gone (it served its ranks, or its
//!   process died) cannot be reached: `ncclInvalidArgument`, "stale unique id".
//! * A collective: each rank sends a header (sequence number, kind, count, dtype) and its send
//!   buffer to every peer and reads theirs, then computes its own receive buffer exactly as the
//!   in-process rendezvous does (f32 in rank order, one rounding), so both transports give the
//!   same bits. Headers that differ are `ncclInvalidUsage` ("ranks disagree"). Collectives of one
//!   communicator run in issue order whatever stream they were queued on.
//! * A peer whose connection closes or errs fails the collective at once; one that stays silent
//!   fails it after `collective_timeout_ms`. After any failure the communicator is broken: its
//!   sockets are shut down (so the peers fail at once too) and later collectives fail.
//!   `ncclCommAbort` does the same from the host.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddrV4, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::NcclError;

/// First bytes of a TCP unique id.
pub const TCP_MAGIC: &[u8; 8] = b"GEMMTCP1";
const HELLO: &[u8; 4] = b"HELO";
const PEER: &[u8; 4] = b"PEER";

/// What a TCP unique id holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpId {
    /// Random bytes naming this communicator.
    pub nonce: [u8; 16],
    /// The root's address.
    pub root: SocketAddrV4,
}

fn fnv1a(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in bytes {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

impl TcpId {
    /// The 128 bytes: magic, nonce, IPv4, port (big-endian), FNV-1a of the above, zeros.
    pub fn to_bytes(self) -> [u8; 128] {
        let mut id = [0u8; 128];
        id[..8].copy_from_slice(TCP_MAGIC);
        id[8..24].copy_from_slice(&self.nonce);
        id[24..28].copy_from_slice(&self.root.ip().octets());
        id[28..30].copy_from_slice(&self.root.port().to_be_bytes());
        let sum = fnv1a(&id[..30]);
        id[30..34].copy_from_slice(&sum.to_le_bytes());
        id
    }

    /// Parses an id; `None` if it is not a TCP id at all (another magic), an error if it is one
    /// but damaged.
    pub fn parse(id: &[u8; 128]) -> Option<Result<Self, NcclError>> {
        if &id[..8] != TCP_MAGIC {
            return None;
        }
        let bad = |why: &str| Some(Err(NcclError::invalid(format!("malformed unique id: {why}"))));
        if u32::from_le_bytes([id[30], id[31], id[32], id[33]]) != fnv1a(&id[..30]) {
            return bad("checksum mismatch (the bytes were changed or truncated on the way)");
        }
        if id[34..].iter().any(|&b| b != 0) {
            return bad("trailing bytes are not zero");
        }
        let ip = Ipv4Addr::new(id[24], id[25], id[26], id[27]);
        let port = u16::from_be_bytes([id[28], id[29]]);
        if port == 0 {
            return bad("port 0");
        }
        let mut nonce = [0u8; 16];
        nonce.copy_from_slice(&id[8..24]);
        Some(Ok(Self { nonce, root: SocketAddrV4::new(ip, port) }))
    }
}

/// The address this process advertises: `GEMM_EMU_NCCL_HOST` (an IPv4 address), else loopback.
fn host_ip() -> Result<Ipv4Addr, NcclError> {
    match std::env::var("GEMM_EMU_NCCL_HOST") {
        Ok(s) if !s.is_empty() => {
            s.parse().map_err(|_| NcclError::invalid(format!("GEMM_EMU_NCCL_HOST={s:?} is not an IPv4 address")))
        }
        _ => Ok(Ipv4Addr::LOCALHOST),
    }
}

fn random_nonce() -> [u8; 16] {
    let mut out = [0u8; 16];
    for (i, half) in out.chunks_mut(8).enumerate() {
        let mut h = RandomState::new().build_hasher();
        h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
        h.write_u32(std::process::id());
        h.write_usize(i);
        half.copy_from_slice(&h.finish().to_le_bytes());
    }
    out
}

fn sys(what: &str, e: std::io::Error) -> NcclError {
    NcclError::System(format!("{what}: {e}"))
}

fn write_u32(s: &mut TcpStream, v: u32) -> std::io::Result<()> {
    s.write_all(&v.to_le_bytes())
}

fn read_u32(s: &mut TcpStream) -> std::io::Result<u32> {
    let mut b = [0u8; 4];
    s.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn read_array<const N: usize>(s: &mut TcpStream) -> std::io::Result<[u8; N]> {
    let mut b = [0u8; N];
    s.read_exact(&mut b)?;
    Ok(b)
}

/// A rank's greeting to the root: magic, the id's nonce, rank count, rank, and the address
/// (IPv4, port) it listens on for its peers.
struct Hello {
    magic: [u8; 4],
    nonce: [u8; 16],
    nranks: u32,
    rank: u32,
    ip: [u8; 4],
    port: [u8; 2],
}

impl Hello {
    fn read(s: &mut TcpStream) -> std::io::Result<Self> {
        Ok(Self {
            magic: read_array(s)?,
            nonce: read_array(s)?,
            nranks: read_u32(s)?,
            rank: read_u32(s)?,
            ip: read_array(s)?,
            port: read_array(s)?,
        })
    }
}

/// Opens a root for a new id and returns the id; the root serves one communicator, then exits.
pub fn new_root(timeout: Duration) -> Result<[u8; 128], NcclError> {
    let ip = host_ip()?;
    let listener = TcpListener::bind(SocketAddrV4::new(ip, 0)).map_err(|e| sys("bind the root", e))?;
    let port = listener.local_addr().map_err(|e| sys("root address", e))?.port();
    let id = TcpId { nonce: random_nonce(), root: SocketAddrV4::new(ip, port) };
    std::thread::Builder::new()
        .name("gemm-emu-nccl-root".into())
        .spawn(move || serve_root(listener, id.nonce, timeout))
        .map_err(|e| sys("start the root thread", e))?;
    Ok(id.to_bytes())
}

struct Joined {
    stream: TcpStream,
    rank: u32,
    addr: SocketAddrV4,
}

fn reply_error(s: &mut TcpStream, why: &str) {
    let _ = s.write_all(&[1]);
    let _ = write_u32(s, why.len() as u32);
    let _ = s.write_all(why.as_bytes());
}

/// The root: accepts hellos until `nranks` ranks have joined (or `timeout` passes since the id
/// was made), then sends every rank the table of addresses.
fn serve_root(listener: TcpListener, nonce: [u8; 16], timeout: Duration) {
    let deadline = Instant::now() + timeout;
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    let mut nranks: Option<u32> = None;
    let mut joined: Vec<Joined> = Vec::new();
    loop {
        if nranks.is_some_and(|n| joined.len() == n as usize) {
            break;
        }
        if Instant::now() >= deadline {
            let why = format!(
                "the root timed out after {} ms: {} of {} ranks joined",
                timeout.as_millis(),
                joined.len(),
                nranks.map_or("?".into(), |n| n.to_string())
            );
            for j in &mut joined {
                reply_error(&mut j.stream, &why);
            }
            return;
        }
        let mut s = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(2));
                continue;
            }
            Err(_) => continue,
        };
        let _ = s.set_nonblocking(false);
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let _ = s.set_nodelay(true);
        let Ok(Hello { magic, nonce: their_nonce, nranks: n, rank, ip, port }) = Hello::read(&mut s) else { continue };
        if &magic != HELLO {
            continue;
        }
        if their_nonce != nonce {
            reply_error(&mut s, "stale unique id: this root serves another communicator");
            continue;
        }
        if n == 0 || rank >= n {
            reply_error(&mut s, &format!("rank {rank} of {n}"));
            continue;
        }
        match nranks {
            Some(have) if have != n => {
                reply_error(&mut s, &format!("nranks {n}; the ranks that joined before said {have}"));
                continue;
            }
            _ => nranks = Some(n),
        }
        if joined.iter().any(|j| j.rank == rank) {
            reply_error(&mut s, &format!("rank {rank} joined twice"));
            continue;
        }
        let addr = SocketAddrV4::new(Ipv4Addr::from(ip), u16::from_be_bytes(port));
        joined.push(Joined { stream: s, rank, addr });
    }
    joined.sort_by_key(|j| j.rank);
    let mut table = Vec::with_capacity(joined.len() * 6);
    for j in &joined {
        table.extend_from_slice(&j.addr.ip().octets());
        table.extend_from_slice(&j.addr.port().to_be_bytes());
    }
    for j in &mut joined {
        let _ = j.stream.write_all(&[0]);
        let _ = write_u32(&mut j.stream, joined_len(&table));
        let _ = j.stream.write_all(&table);
    }
}

fn joined_len(table: &[u8]) -> u32 {
    (table.len() / 6) as u32
}

/// One rank's connections to its peers.
#[derive(Debug)]
pub struct Mesh {
    /// This rank.
    pub rank: usize,
    /// Number of ranks.
    pub nranks: usize,
    /// The stream to each other rank (`None` at this rank's own index).
    peers: Vec<Option<TcpStream>>,
    /// The sequence number of the next collective to run, and why the mesh is broken.
    turn: Mutex<(u64, Option<String>)>,
    cv: Condvar,
    aborted: AtomicBool,
}

/// Joins the communicator of `id` as `rank` of `nranks`: hello to the root, then the mesh.
pub fn join(id: &TcpId, nranks: usize, rank: usize, timeout: Duration) -> Result<Mesh, NcclError> {
    let deadline = Instant::now() + timeout;
    let listener = TcpListener::bind(SocketAddrV4::new(*id.root.ip(), 0)).map_err(|e| sys("bind the rank", e))?;
    let me = match listener.local_addr().map_err(|e| sys("rank address", e))? {
        std::net::SocketAddr::V4(a) => a,
        std::net::SocketAddr::V6(_) => return Err(NcclError::System("IPv6 listener".into())),
    };
    let mut root = TcpStream::connect_timeout(&id.root.into(), timeout).map_err(|e| {
        NcclError::invalid(format!(
            "stale unique id: cannot reach its root at {} ({e}); the root serves one communicator and \
             ends with it or with the process that made the id",
            id.root
        ))
    })?;
    root.set_nodelay(true).map_err(|e| sys("root socket", e))?;
    root.set_read_timeout(Some(timeout)).map_err(|e| sys("root socket", e))?;
    let mut hello = Vec::with_capacity(38);
    hello.extend_from_slice(HELLO);
    hello.extend_from_slice(&id.nonce);
    hello.extend_from_slice(&(nranks as u32).to_le_bytes());
    hello.extend_from_slice(&(rank as u32).to_le_bytes());
    hello.extend_from_slice(&me.ip().octets());
    hello.extend_from_slice(&me.port().to_be_bytes());
    root.write_all(&hello).map_err(|e| sys("hello to the root", e))?;
    let lost = |e: std::io::Error| {
        if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) {
            NcclError::Remote(format!("rank {rank}: the other ranks did not join within {} ms", timeout.as_millis()))
        } else {
            NcclError::Remote(format!("rank {rank}: the root closed the connection ({e})"))
        }
    };
    let [status] = read_array::<1>(&mut root).map_err(lost)?;
    let n = read_u32(&mut root).map_err(lost)? as usize;
    if status != 0 {
        let mut why = vec![0u8; n.min(4096)];
        root.read_exact(&mut why).map_err(lost)?;
        let why = String::from_utf8_lossy(&why).into_owned();
        return Err(if why.starts_with("stale") {
            NcclError::invalid(why)
        } else if why.contains("timed out") {
            NcclError::Remote(why)
        } else {
            NcclError::InvalidUsage(why)
        });
    }
    let mut table = vec![0u8; n * 6];
    root.read_exact(&mut table).map_err(lost)?;
    drop(root);
    let addrs: Vec<SocketAddrV4> = table
        .chunks(6)
        .map(|c| SocketAddrV4::new(Ipv4Addr::new(c[0], c[1], c[2], c[3]), u16::from_be_bytes([c[4], c[5]])))
        .collect();
    let mut peers: Vec<Option<TcpStream>> = (0..nranks).map(|_| None).collect();
    // Lower ranks accept from higher ones: connect down, accept up.
    for (j, addr) in addrs.iter().enumerate().take(rank) {
        let mut s = TcpStream::connect_timeout(&(*addr).into(), timeout)
            .map_err(|e| NcclError::Remote(format!("rank {rank}: cannot connect to rank {j} at {addr}: {e}")))?;
        s.write_all(PEER)
            .and_then(|()| s.write_all(&id.nonce))
            .and_then(|()| write_u32(&mut s, rank as u32))
            .map_err(|e| NcclError::Remote(format!("rank {rank} -> rank {j}: {e}")))?;
        peers[j] = Some(s);
    }
    listener.set_nonblocking(true).map_err(|e| sys("rank listener", e))?;
    let mut missing = nranks - rank - 1;
    while missing > 0 {
        match listener.accept() {
            Ok((mut s, _)) => {
                s.set_nonblocking(false).map_err(|e| sys("peer socket", e))?;
                s.set_read_timeout(Some(timeout)).map_err(|e| sys("peer socket", e))?;
                let hello = (|| -> std::io::Result<([u8; 4], [u8; 16], u32)> {
                    Ok((read_array(&mut s)?, read_array(&mut s)?, read_u32(&mut s)?))
                })();
                let Ok((magic, nonce, j)) = hello else { continue };
                let j = j as usize;
                if &magic != PEER || nonce != id.nonce || j <= rank || j >= nranks || peers[j].is_some() {
                    continue;
                }
                peers[j] = Some(s);
                missing -= 1;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(NcclError::Remote(format!(
                        "rank {rank}: {missing} higher ranks did not connect within {} ms",
                        timeout.as_millis()
                    )));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(sys("accept a peer", e)),
        }
    }
    for s in peers.iter().flatten() {
        s.set_nodelay(true).map_err(|e| sys("peer socket", e))?;
        s.set_read_timeout(Some(timeout)).map_err(|e| sys("peer socket", e))?;
        s.set_write_timeout(Some(timeout)).map_err(|e| sys("peer socket", e))?;
    }
    Ok(Mesh { rank, nranks, peers, turn: Mutex::new((0, None)), cv: Condvar::new(), aborted: AtomicBool::new(false) })
}

/// What a rank announces before its data; every rank must announce the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The collective's sequence number on the communicator.
    pub seq: u64,
    /// Kind and reduction, encoded.
    pub kind: u16,
    /// Element count (as the call counts it).
    pub count: u64,
    /// `ncclDataType_t`.
    pub dtype: u16,
    /// Bytes of data that follow.
    pub bytes: u64,
}

impl Header {
    fn encode(&self) -> [u8; 28] {
        let mut b = [0u8; 28];
        b[..8].copy_from_slice(&self.seq.to_le_bytes());
        b[8..10].copy_from_slice(&self.kind.to_le_bytes());
        b[10..18].copy_from_slice(&self.count.to_le_bytes());
        b[18..20].copy_from_slice(&self.dtype.to_le_bytes());
        b[20..28].copy_from_slice(&self.bytes.to_le_bytes());
        b
    }
    fn decode(b: &[u8; 28]) -> Self {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
        Self {
            seq: u64_at(0),
            kind: u16::from_le_bytes([b[8], b[9]]),
            count: u64_at(10),
            dtype: u16::from_le_bytes([b[18], b[19]]),
            bytes: u64_at(20),
        }
    }
}

/// Why a collective failed, for the error mapping of the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// A peer closed its connection or errored (it died, or broke its communicator).
    PeerLost(String),
    /// A peer sent nothing within the timeout.
    Timeout(String),
    /// The ranks issued different collectives.
    Disagree(String),
    /// The communicator was aborted or broken earlier.
    Broken(String),
}

impl Failure {
    /// The message.
    pub fn message(&self) -> &str {
        match self {
            Self::PeerLost(m) | Self::Timeout(m) | Self::Disagree(m) | Self::Broken(m) => m,
        }
    }
}

impl Mesh {
    /// Shuts every connection down: blocked sends and receives of this rank fail at once, and
    /// each peer sees the connection close.
    pub fn abort(&self, why: &str) {
        self.aborted.store(true, Ordering::SeqCst);
        for s in self.peers.iter().flatten() {
            let _ = s.shutdown(Shutdown::Both);
        }
        let mut t = self.turn.lock();
        if t.1.is_none() {
            t.1 = Some(why.to_owned());
        }
        self.cv.notify_all();
    }

    /// Runs collective `header.seq` once every earlier one has run: sends `mine` to every
    /// peer, receives theirs, and returns every rank's data in rank order (this rank's own at
    /// its index).
    pub fn exchange(&self, header: Header, mine: Vec<u8>, timeout: Duration) -> Result<Vec<Vec<u8>>, Failure> {
        let deadline = Instant::now() + timeout;
        {
            let mut t = self.turn.lock();
            loop {
                if let Some(why) = &t.1 {
                    return Err(Failure::Broken(format!("the communicator is broken: {why}")));
                }
                if t.0 == header.seq {
                    break;
                }
                if self.cv.wait_until(&mut t, deadline).timed_out() {
                    return Err(Failure::Timeout(format!(
                        "collective {} waited {} ms for collective {} of its communicator",
                        header.seq,
                        timeout.as_millis(),
                        t.0
                    )));
                }
            }
        }
        let result = self.exchange_now(header, mine);
        let mut t = self.turn.lock();
        match &result {
            Ok(_) => t.0 += 1,
            Err(f) => {
                drop(t);
                // Out of step now: shut down so the peers fail at once rather than time out.
                self.abort(f.message());
                t = self.turn.lock();
            }
        }
        self.cv.notify_all();
        drop(t);
        result
    }

    fn exchange_now(&self, header: Header, mine: Vec<u8>) -> Result<Vec<Vec<u8>>, Failure> {
        let rank = self.rank;
        let head = header.encode();
        let mut theirs: Vec<Vec<u8>> = (0..self.nranks).map(|_| Vec::new()).collect();
        let write_result = std::thread::scope(|scope| {
            // Every rank writes to its peers in rank order on one thread while reading from them
            // in rank order on another: a writer blocked on a full socket waits only for a reader
            // that is waiting on a lower-ranked writer, so nothing can wait in a cycle.
            let writer = scope.spawn(|| -> Result<(), Failure> {
                for (j, s) in self.peers.iter().enumerate() {
                    let Some(s) = s else { continue };
                    let mut s = s;
                    s.write_all(&head).and_then(|()| s.write_all(&mine)).map_err(|e| self.io_failure(j, &e))?;
                }
                Ok(())
            });
            for (j, s) in self.peers.iter().enumerate() {
                let Some(s) = s else { continue };
                let mut s = s;
                let mut hb = [0u8; 28];
                s.read_exact(&mut hb).map_err(|e| self.io_failure(j, &e))?;
                let h = Header::decode(&hb);
                let mut data = vec![0u8; usize::try_from(h.bytes).unwrap_or(0).min(1 << 34)];
                s.read_exact(&mut data).map_err(|e| self.io_failure(j, &e))?;
                if h.seq != header.seq || h.kind != header.kind || h.count != header.count || h.dtype != header.dtype {
                    return Err(Failure::Disagree(format!(
                        "ranks disagree on collective {}: rank {rank} issued {:?}, rank {j} {:?}",
                        header.seq, header, h
                    )));
                }
                theirs[j] = data;
            }
            writer.join().unwrap_or_else(|_| Err(Failure::PeerLost("the sending thread panicked".into())))
        });
        write_result?;
        theirs[rank] = mine;
        Ok(theirs)
    }

    fn io_failure(&self, peer: usize, e: &std::io::Error) -> Failure {
        if self.aborted.load(Ordering::SeqCst) {
            return Failure::Broken(format!("rank {}: the communicator was aborted", self.rank));
        }
        match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                Failure::Timeout(format!("rank {}: rank {peer} sent nothing within the collective timeout", self.rank))
            }
            _ => Failure::PeerLost(format!(
                "rank {}: the connection to rank {peer} closed ({e}): the process died or broke its communicator",
                self.rank
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_damage_is_detected() {
        let id = TcpId { nonce: [7; 16], root: SocketAddrV4::new(Ipv4Addr::LOCALHOST, 4242) };
        let b = id.to_bytes();
        assert_eq!(TcpId::parse(&b), Some(Ok(id)));
        let mut bad = b;
        bad[29] ^= 1;
        assert!(matches!(TcpId::parse(&bad), Some(Err(NcclError::InvalidArgument(m))) if m.contains("checksum")));
        let mut other = b;
        other[..8].copy_from_slice(b"GEMMEMU1");
        assert_eq!(TcpId::parse(&other), None);
    }

    #[test]
    fn headers_round_trip() {
        let h = Header { seq: 3, kind: 0x0102, count: 77, dtype: 7, bytes: 308 };
        assert_eq!(Header::decode(&h.encode()), h);
    }

    #[test]
    fn three_ranks_exchange_in_threads_and_a_stale_id_is_refused() {
        let t = Duration::from_secs(5);
        let id_bytes = new_root(t).unwrap();
        let id = TcpId::parse(&id_bytes).unwrap().unwrap();
        let meshes: Vec<Mesh> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..3).map(|r| s.spawn(move || join(&id, 3, r, t).unwrap())).collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let outs: Vec<Vec<Vec<u8>>> = std::thread::scope(|s| {
            let hs: Vec<_> = meshes
                .iter()
                .map(|m| {
                    s.spawn(move || {
                        let h = Header { seq: 0, kind: 1, count: 2, dtype: 1, bytes: 2 };
                        m.exchange(h, vec![m.rank as u8; 2], t).unwrap()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for o in outs {
            assert_eq!(o, vec![vec![0, 0], vec![1, 1], vec![2, 2]]);
        }
        // The root served its communicator and is gone: the id is stale now.
        let e = join(&id, 3, 0, Duration::from_millis(500)).unwrap_err();
        assert!(matches!(&e, NcclError::InvalidArgument(m) if m.contains("stale")), "{e}");
        // A rank that goes away makes its peers fail at once, not after the timeout.
        meshes[2].abort("test");
        let start = Instant::now();
        std::thread::scope(|s| {
            for m in &meshes[..2] {
                s.spawn(move || {
                    let h = Header { seq: 1, kind: 1, count: 1, dtype: 1, bytes: 1 };
                    let e = m.exchange(h, vec![0], t).unwrap_err();
                    assert!(matches!(e, Failure::PeerLost(_)), "{e:?}");
                });
            }
        });
        assert!(start.elapsed() < Duration::from_secs(2));
    }
}
