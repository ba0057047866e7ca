#!/usr/bin/env python3
"""chaos.py: the chaos soak (scripts/bench/chaos.sh is its front door; docs/operations.md,
"What survives what", reads its table).

A whole local campaign (coordinator, trainer, two workers, the tiny net) runs while a fault
injector applies faults from a catalogue (every kind once per round, in an order and at
moments drawn from a seed), one at a time, and a
checker tests the campaign's invariants every second, not only at the end:

  exactly-once   every game a worker saw acknowledged (its spool file deleted, watched with
                 inotify) is in the segments, and no (worker, seq) is stored twice; a record
                 the injector damaged on purpose is the only excused loss
  promotions     every promotion promotions.log announced is in campaign.db after the next
                 coordinator start, and that start's best net is the last one announced
                 (or an earlier one when the injector damaged the later nets' files);
                 each of its lines is one JSON object (a write the full disk cut short is
                 cut off, not run on into the next line)
  progress       stored games grow: never STALL_BOUND_S seconds without a new one, counting
                 only the time outside a fault's own duration (a fault ends when it is
                 healed; the seconds between faults add up)
  memory         the coordinator's RSS stays under --rss-cap-mb
  checkpoint     the trainer's newest checkpoint loads: a trainer restarted on it (by a
                 fault, and once at the end) keeps running
  identity       the campaign id in campaign.db never changes
  liveness       no daemon exits unless the injector stopped it
  honest         no arena result of the soak's own workers is refused as forged (a result
                 queued across a coordinator restart reaches it before the worker's Hello:
                 it is asked for again after the Hello, never counted against the worker)
  rounds         with --population K (K trainers, the members of a population; the trainer
                 faults strike member 1): no round of population.log is decided twice (a
                 member's rating of a round appears once), rounds only go up, and once the
                 first is decided, never ROUND_STALL_BOUND_S seconds without a new one,
                 counted as for progress (a member gone for good, or a net a round plays
                 damaged, must not stop the population)

At the end it prints one row per fault kind (injected, survived, violations), the
violations themselves, and the command that reproduces the run (same seed, same schedule).
Exit status: 0 with no violation, 1 with any, 2 on a usage error.
"""
import argparse
import ctypes
import json
import os
import random
import re
import resource
import select
import shutil
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

STALL_BOUND_S = 60   # self-play may stand still this long after a fault heals (docs/operations.md)
# A population's rounds, once the first is decided: a pair whose Job died with a kill -9
# coordinator is re-issued after the pair deadline (2 x worker_timeout_ms = 60 s here), then
# played (seconds with the tiny net).
ROUND_STALL_BOUND_S = 75
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The catalogue: name -> (what it does, needs root).
KINDS = {
    "kill9_coordinator": ("kill -9 the coordinator, restart it", False),
    "term_coordinator": ("SIGTERM the coordinator, restart it", False),
    "kill9_worker": ("kill -9 a worker, restart it", False),
    "kill9_trainer": ("kill -9 the trainer, restart it", False),
    "sigstop_coordinator": ("SIGSTOP the coordinator for 2-10 s", False),
    "sigstop_worker": ("SIGSTOP a worker for 2-10 s", False),
    "sigstop_trainer": ("SIGSTOP the trainer for 2-10 s", False),
    "db_lock": ("another process holds BEGIN IMMEDIATE on campaign.db for 5-20 s", False),
    "segment_flip": ("flip a byte in a stored record of a closed segment", False),
    "net_flip": ("flip a byte in the best net's file", False),
    "candidate_move": ("move the open match's candidate to nets/rejected/", False),
    "checkpoint_flip": ("flip a byte in the trainer's checkpoint, kill -9 and restart it", False),
    "clock_step": ("restart the coordinator with its wall clock an hour back (faketime)", False),
    "conn_flood": ("1,100 idle TCP connections to the ROUTER for 5-15 s", False),
    "slow_reader": ("800 NetRequests whose replies are never read", False),
    "amplify": ("an 8 MiB envelope of empty repeated submessages", False),
    "collide": ("claim the routing ids libzmq hands out next, then connect without one", False),
    "foreign_peer": ("a Hello from another campaign", False),
    "junk": ("random frames and an envelope of another protocol version", False),
    "full_disk": ("fill the campaign's file system for 5-20 s", True),
    "trainer_diverge": ("run the trainer with --lr 0:99 until it stops, then resume it", False),
    "forged_member": ("--population: a second trainer claims member 1's slot, asks for what"
                      " it does not hold, then leaves", False),
    "member_gone": ("--population: kill -9 the last member and keep it down 100-120 s, past"
                    " worker_timeout_ms", False),
    "round_net_flip": ("--population: flip a byte in a member's net the open round plays (else"
                       " the newest member candidate's)", False),
}


def log(msg):
    print(time.strftime("%H:%M:%S ") + msg, flush=True)


class Daemon:
    """One daemon process; `expected` says the injector stopped it (else its exit is a fault)."""

    def __init__(self, name, argv, logpath, nofile):
        self.name, self.argv, self.logpath, self.nofile = name, argv, logpath, nofile
        self.proc, self.expected, self.env = None, False, {}
        self.starts = 0

    def start(self):
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", **self.env)
        lim = self.nofile

        def limit():  # a daemon starts with a shell's descriptor limit, not the soak's
            resource.setrlimit(resource.RLIMIT_NOFILE, lim)
        out = open(self.logpath, "ab")
        self.proc = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT,
                                     env=env, preexec_fn=limit)
        out.close()
        self.expected, self.starts = False, self.starts + 1

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig):
        if self.alive():
            os.kill(self.proc.pid, sig)

    def kill9(self):
        self.expected = True
        self.signal(signal.SIGKILL)
        self.proc.wait()

    def term(self, grace=30):
        """SIGTERM; True when it left within grace seconds (else it is killed)."""
        self.expected = True
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGTERM)
        try:
            self.proc.wait(grace)
            return True
        except subprocess.TimeoutExpired:
            self.kill9()
            return False

    def rss_mb(self):
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024.0
        except (OSError, AttributeError):
            pass
        return 0.0


class SpoolWatch(threading.Thread):
    """Every spool file created and deleted, by inotify: a deleted .xqs is an acknowledged
    game (the worker unlinks it on the coordinator's Ack)."""
    IN_CLOSE_WRITE, IN_MOVED_TO, IN_DELETE = 0x8, 0x80, 0x200

    def __init__(self):
        super().__init__(daemon=True)
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.wd = {}
        self.acked = {}    # (worker, seq) -> time seen acknowledged
        self.lock = threading.Lock()

    def watch(self, path, worker):
        os.makedirs(path, exist_ok=True)
        wd = self.libc.inotify_add_watch(self.fd, path.encode(),
                                         self.IN_MOVED_TO | self.IN_CLOSE_WRITE | self.IN_DELETE)
        if wd < 0:
            raise OSError(ctypes.get_errno(), "inotify_add_watch " + path)
        self.wd[wd] = worker

    def run(self):
        while True:
            select.select([self.fd], [], [], 1.0)
            try:
                buf = os.read(self.fd, 65536)
            except BlockingIOError:
                continue
            off = 0
            while off + 16 <= len(buf):
                wd, mask, _cookie, n = struct.unpack_from("iIII", buf, off)
                name = buf[off + 16:off + 16 + n].split(b"\0", 1)[0].decode(errors="replace")
                off += 16 + n
                m = re.fullmatch(r"[0-9a-f]{8}-([0-9a-f]{16})\.xqs", name)
                if m and mask & self.IN_DELETE and wd in self.wd:
                    with self.lock:
                        self.acked[(self.wd[wd], int(m.group(1), 16))] = time.time()


def segment_records(data):
    """(offset of payload, length, intact, worker, seq) of each record of one segment's
    bytes. A record whose CRC fails is stepped over by its length (the injector flips
    payload bytes, never lengths) and its worker and seq are not trusted; a torn tail ends
    the file."""
    off = 12
    while off + 8 <= len(data):
        length, crc = struct.unpack_from("<II", data, off)
        if length < 10 or off + 8 + length > len(data):
            return
        payload = data[off + 8:off + 8 + length]
        wlen = struct.unpack_from("<H", payload, 0)[0]
        if zlib.crc32(payload) == crc and 2 + wlen + 8 <= length:
            yield (off + 8, length, True, payload[2:2 + wlen].decode(errors="replace"),
                   struct.unpack_from("<Q", payload, 2 + wlen)[0])
        else:
            yield (off + 8, length, False, None, None)
        off += 8 + length


def read_segments(games_dir):
    """(worker, seq) -> count over every intact record of games/seg-*.bin."""
    counts = {}
    try:
        names = sorted(n for n in os.listdir(games_dir) if re.fullmatch(r"seg-\d{6}\.bin", n))
    except OSError:
        return counts
    for n in names:
        try:
            with open(os.path.join(games_dir, n), "rb") as f:
                data = f.read()
        except OSError:
            continue
        for _off, _len, intact, wid, seq in segment_records(data):
            if intact:
                counts[(wid, seq)] = counts.get((wid, seq), 0) + 1
    return counts


def record_offsets(path):
    """(offset of payload, length, worker, seq) of each intact record of one segment."""
    with open(path, "rb") as f:
        data = f.read()
    return [(o, n, w, q) for o, n, ok, w, q in segment_records(data) if ok]


def flip_byte(path, rng, lo=0, hi=None):
    with open(path, "r+b") as f:
        size = os.fstat(f.fileno()).st_size
        hi = size if hi is None else hi
        if hi - lo < 1:
            return False
        at = rng.randrange(lo, hi)
        f.seek(at)
        b = f.read(1)
        f.seek(at)
        f.write(bytes([b[0] ^ (1 << rng.randrange(8))]))
        f.flush()
        os.fsync(f.fileno())
    return True


def db_query(db, sql, args=()):
    """A read-only query; None when the database cannot be read now (locked, missing)."""
    try:
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=0.5)
        try:
            return con.execute(sql, args).fetchall()
        finally:
            con.close()
    except sqlite3.Error:
        return None


class Soak:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.out = a.out
        self.camp = os.path.join(self.out, "camp")
        self.db = os.path.join(self.camp, "campaign.db")
        self.bin = a.bin
        self.violations = []            # (time, kind at fault, text)
        self.stats = {k: [0, 0, 0] for k in a.kinds}   # injected, survived, violations
        self.current = None             # the fault being applied or last healed: [kind, start, heal]
        self.expected_loss = set()      # (worker, seq) damaged on purpose
        self.damaged_nets = set()       # hex ids whose files the injector damaged or moved
        self.announced = []             # promoted net hex ids, in order
        self.fallbacks = set()          # their indexes that are a start's fall back
        self.promo_off = 0
        self.promo_lock = threading.Lock()   # the checker and the injector both read the log
        self.campaign_id = None
        self.stored_n, self.last_growth = 0, time.time()
        self.rss_max = 0.0
        self.rounds, self.rounds_growth = 0, time.time()
        self.honest_off = 0             # check_honest's place in the coordinator's log
        self.quiet, self.quiet_at = {}, {}   # quiet_clock's
        self.stop = threading.Event()
        self.fault_lock = threading.Lock()
        self.reported = set()
        port = a.port or free_port()
        self.router, self.pub = "tcp://127.0.0.1:%d" % port, "tcp://127.0.0.1:%d" % (port + 1)
        self.port = port
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        self.nofile = (min(soft, 1024), hard)
        self.spool = SpoolWatch()
        self.build_daemons()

    def build_daemons(self):
        b, o = self.bin, self.out
        self.coord = Daemon("coordinator", [
            b + "/coordinator/xqz-coordinator", "--campaign", self.camp, "--router", self.router,
            "--pub", self.pub, "--http=", "--net_size", "tiny", "--min_positions", "150",
            "--sims", "16", "--fast_sims", "4", "--max_plies", "80", "--games_per_job", "4",
            "--fsync_ms", "50", "--status_ms", "1000", "--gating", "threshold",
            "--threshold_games", "4", "--threshold_score", "0", "--gating_sims", "8",
            "--batch_size", "32", "--anchor_games", "0", "--segment_bytes", "65536"],
            os.path.join(o, "coord.log"), self.nofile)
        k = self.a.population
        if k >= 2:
            # Rounds often enough to be struck by faults: two games a pairing, half the
            # arena slots, the worse half copying.
            self.coord.argv += ["--population", str(k), "--population_control", "0",
                                "--pbt_interval_steps", "300", "--pbt_round_games", "2",
                                "--pbt_share", "0.5", "--pbt_quantile", "0.5"]
        trainer_args = ["--size", "tiny", "--batch", "32", "--candidate-every",
                        "100" if k >= 2 else "400", "--checkpoint-every-s", "2", "--log-every",
                        "20", "--threads", "1"]
        # Member 1 is "the trainer" (its faults and checks); the others are members 2..K.
        self.trainer = Daemon("trainer", [
            b + "/trainer/xqz-trainer", "--coordinator", self.router, "--dir",
            os.path.join(o, "trainer")] + trainer_args, os.path.join(o, "trainer.log"), self.nofile)
        self.members = [Daemon("member%d" % i, [
            b + "/trainer/xqz-trainer", "--coordinator", self.router, "--dir",
            os.path.join(o, "member%d" % i)] + trainer_args,
            os.path.join(o, "member%d.log" % i), self.nofile) for i in range(2, k + 1)]
        self.workers = []
        for w in ("w1", "w2"):
            d = Daemon(w, [b + "/worker/xqz-worker", "--coordinator", self.router, "--pub",
                           self.pub, "--id", w, "--threads", "1", "--games-per-thread", "4",
                           "--progress", "5", "--timeout", "3000", "--cache",
                           os.path.join(o, w + ".cache"), "--spool", os.path.join(o, w + ".spool")],
                       os.path.join(o, w + ".log"), self.nofile)
            self.workers.append(d)
            self.spool.watch(os.path.join(o, w + ".spool"), w)

    def daemons(self):
        return [self.coord, self.trainer] + self.members + self.workers

    def violate(self, text, key=None):
        """Records a violation once per key, charged to the fault in force or last healed."""
        if key is not None:
            if key in self.reported:
                return
            self.reported.add(key)
        kind = "(no fault)"
        cur = self.current
        if cur and (cur[2] is None or time.time() - cur[2] < STALL_BOUND_S):
            kind = cur[0]
            cur[3] = True
        self.violations.append((time.time(), kind, text))
        log("VIOLATION [%s] %s" % (kind, text))

    # ---- the checker -------------------------------------------------------------------
    def check_loop(self):
        n = 0
        while not self.stop.wait(1.0):
            n += 1
            with self.fault_lock:
                self.check_liveness()
            self.check_rss()
            if n % 3 == 0:
                self.check_games()
            if n % 5 == 0:
                self.check_identity()
                self.check_rounds()
                self.check_honest()
            self.read_promotions()

    def check_liveness(self):
        for d in self.daemons():
            if d.proc is not None and not d.alive() and not d.expected:
                self.violate("%s exited by itself (status %s); restarted" % (d.name, d.proc.returncode),
                             key=("exit", d.name, int(time.time() // 30)))
                d.start()

    def check_rss(self):
        if self.coord.alive():
            r = self.coord.rss_mb()
            self.rss_max = max(self.rss_max, r)
            if r > self.a.rss_cap_mb:
                self.violate("coordinator RSS %.0f MiB > cap %d MiB" % (r, self.a.rss_cap_mb),
                             key=("rss", int(time.time() // 60)))

    def rejected_by_log(self):
        out = set()
        for w in self.workers:
            try:
                with open(w.logpath, errors="replace") as f:
                    for line in f:
                        m = re.search(r"game rejected by the coordinator; dropped seq=(\d+)", line)
                        if m:
                            out.add((w.name, int(m.group(1))))
            except OSError:
                pass
        return out

    def check_games(self, final=False):
        stored = read_segments(os.path.join(self.camp, "games"))
        now = time.time()
        with self.spool.lock:
            acked = dict(self.spool.acked)
        rejected = None
        for key, t in acked.items():
            if key in stored or key in self.expected_loss or (not final and now - t < 2):
                continue
            if rejected is None:
                rejected = self.rejected_by_log()
            if key in rejected:
                continue
            self.violate("acknowledged game %s seq=%d is not stored" % key, key=("lost", key))
        for key, c in stored.items():
            if c > 1:
                self.violate("game %s seq=%d stored %d times" % (key[0], key[1], c), key=("dup", key))
        total = sum(stored.values())
        if self.quiet_clock("games", total > self.stored_n, now) > STALL_BOUND_S and not final:
            self.violate("no new game stored for %.0f s" % (now - self.last_growth),
                         key=("stall", int(self.last_growth)))
        if total > self.stored_n:
            self.stored_n, self.last_growth = total, now
        self.acked_n, self.stored_total = len(acked), total

    def check_honest(self):
        """The coordinator's log since the last look: an arena result refused as forged can
        only be an honest worker's here (no hostile peer of the catalogue sends one)."""
        try:
            with open(self.coord.logpath, "rb") as f:
                f.seek(self.honest_off)
                data = f.read()
        except OSError:
            return
        end = data.rfind(b"\n") + 1   # a line still being written is read next time
        self.honest_off += end
        for line in data[:end].decode("utf-8", "replace").splitlines():
            if "arena result for a pair not issued to this peer" in line:
                self.violate("an honest worker's arena result was refused as forged: %s" %
                             line.strip()[:160], key=("forged", line[:24]))

    def check_identity(self):
        rows = db_query(self.db, "select hex from campaign")
        if rows is None:
            if not os.path.exists(self.db):
                self.violate("campaign.db is missing", key=("nodb",))
            return
        if rows:
            if self.campaign_id is None:
                self.campaign_id = rows[0][0]
            elif rows[0][0] != self.campaign_id:
                self.violate("campaign id changed %s -> %s" % (self.campaign_id, rows[0][0]),
                             key=("cid", rows[0][0]))

    def check_rounds(self):
        """population.log: each member's rating of a round once, rounds never going down."""
        path = os.path.join(self.camp, "population.log")
        seen, last = set(), 0
        try:
            with open(path, errors="replace") as f:
                for line in f:
                    m = re.search(r'"type":"rating","round":(\d+),"member":(\d+)', line)
                    if not m:
                        continue
                    r, member = int(m.group(1)), int(m.group(2))
                    if (r, member) in seen:
                        self.violate("round %d decided twice (member %d rated again)" % (r, member),
                                     key=("round2", r))
                    if r < last:
                        self.violate("round %d recorded after round %d" % (r, last), key=("rdown", r))
                    seen.add((r, member))
                    last = max(last, r)
        except OSError:
            pass
        now = time.time()
        quiet = self.quiet_clock("rounds", last > self.rounds, now, paused=self.rounds_impossible())
        if last > self.rounds:
            self.rounds, self.rounds_growth = last, now
        if self.rounds and quiet > ROUND_STALL_BOUND_S:
            self.violate("no population round decided for %.0f s" % (now - self.rounds_growth),
                         key=("rstall", int(self.rounds_growth)))

    def rounds_impossible(self):
        """Whether no round can be due: fewer than two members hold a net the coordinator can
        serve (members.txt writes a lost net as 0) while a member is away (member_gone). In
        a population of two, member_gone and round_net_flip striking the away member's last
        net leave one member with a net until it comes back; that wait is the population's
        rule (population_round.c, round_due), not a stall."""
        if not any(d.proc is not None and not d.alive() for d in self.members):
            return False
        try:
            with open(os.path.join(self.camp, "members.txt"), errors="replace") as f:
                nets = re.findall(r"^slot \d+ .* net=([0-9a-f]{16}) ", f.read(), re.M)
        except OSError:
            return False
        impossible = sum(1 for n in nets if int(n, 16)) < 2
        if impossible and not getattr(self, "rounds_wait_logged", False):
            log("rounds wait: fewer than two members hold a servable net while a member is away")
        self.rounds_wait_logged = impossible
        return impossible

    def quiet_clock(self, what, grew, now, paused=False):
        """Seconds without growth of `what`, counting only the time outside a fault in force
        (a fault's own duration does not count; the time after it heals does) and outside a
        pause the caller names (a state in which no growth is due). Faults come every few
        seconds, so the time since the last one healed would never grow long."""
        last = self.quiet_at.get(what, now)
        self.quiet_at[what] = now
        cur = self.current
        if grew:
            self.quiet[what] = 0.0
        elif not paused and not (cur and cur[2] is None):
            self.quiet[what] = self.quiet.get(what, 0.0) + (now - last)
        return self.quiet.get(what, 0.0)

    def check_trainer_resumes(self):
        """The trainer's newest checkpoint loads: a trainer started on it is still running
        15 s later (one that cannot load its checkpoint exits at once)."""
        with self.fault_lock:
            if self.trainer.alive():
                self.trainer.term()
            self.trainer.start()
        time.sleep(15)
        if not self.trainer.alive():
            self.violate("the trainer does not resume from its newest checkpoint (status %s)" %
                         self.trainer.proc.returncode, key=("resume", time.time()))

    def read_promotions(self):
        with self.promo_lock:
            self._read_promotions()

    def _read_promotions(self):
        path = os.path.join(self.camp, "promotions.log")
        try:
            with open(path, errors="replace") as f:
                f.seek(self.promo_off)
                text = f.read()
        except OSError:
            return
        end = text.rfind("\n") + 1
        self.promo_off += len(text[:end].encode())
        for line in text[:end].splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                # A line is whole or absent (a short write on a full disk is cut off
                # again): one that is not one object means two ran together.
                self.violate("promotions.log holds a line that is not one JSON object (a torn"
                             " write ran on into the next): %.80s" % line, key=("torn", line))
                continue
            if rec.get("promoted") is True and rec.get("net"):
                if rec.get("fallback") is True:
                    self.fallbacks.add(len(self.announced))
                self.announced.append(rec["net"])

    def check_promotions_after_start(self, before):
        """After a coordinator start: every announced promotion is in the database, and the
        start's best net is the last announced one not damaged on purpose. `before` is the
        count announced when the last coordinator had stopped: the new one may write fall
        backs before it listens, and promote a waiting candidate in its first second."""
        self.read_promotions()
        upto = before
        while upto in self.fallbacks:
            upto += 1
        if not self.announced:
            return
        deadline = time.time() + 20
        while time.time() < deadline:
            rows = db_query(self.db, "select n.hex from promotions p join nets n on n.id = p.net")
            if rows is not None:
                break
            time.sleep(0.5)
        else:
            return
        have = {r[0] for r in rows}
        for h in self.announced:
            if h not in have and h not in self.damaged_nets:
                self.violate("announced promotion of net %s is not in campaign.db after a restart" % h,
                             key=("promo", h))
        want = [h for h in self.announced[:upto] if h not in self.damaged_nets]
        best = self.coord_best()
        if want and best and best != want[-1] and best not in self.damaged_nets:
            self.violate("after a restart the best net is %s, not the last announced %s" %
                         (best, want[-1]), key=("best", best, want[-1]))

    def coord_best(self):
        try:
            with open(self.coord.logpath, errors="replace") as f:
                lines = [l for l in f if " listening " in l]
        except OSError:
            return None
        m = re.search(r"best=([0-9a-f]+)", lines[-1]) if lines else None
        return m.group(1) if m else None

    # ---- the injector -------------------------------------------------------------------
    def wait_listening(self, before, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            try:
                with open(self.coord.logpath, errors="replace") as f:
                    if sum(1 for l in f if " listening " in l) > before:
                        return True
            except OSError:
                pass
            if not self.coord.alive():
                return False
            time.sleep(0.2)
        return False

    def listening_count(self):
        try:
            with open(self.coord.logpath, errors="replace") as f:
                return sum(1 for l in f if " listening " in l)
        except OSError:
            return 0

    def restart_coord(self, env=None):
        n = self.listening_count()
        self.read_promotions()   # all that the stopped coordinator announced
        before = len(self.announced)
        self.coord.env = env or {}
        self.coord.start()
        if self.wait_listening(n):
            time.sleep(1)
            self.check_promotions_after_start(before)
        elif not self.coord.alive():
            self.violate("the coordinator does not start again: see coord.log", key=("nostart", time.time()))

    def dur(self, lo, hi):
        return self.rng.uniform(lo, hi)

    def inject(self, kind):
        """Applies one fault of `kind` and heals it. Returns False when it does not apply now."""
        rng, coord = self.rng, self.coord
        if kind in ("kill9_coordinator", "term_coordinator"):
            with self.fault_lock:
                if kind == "kill9_coordinator":
                    coord.kill9()
                elif not coord.term():
                    self.violate("the coordinator did not stop within 30 s of SIGTERM")
            time.sleep(self.dur(0.2, 2))
            with self.fault_lock:
                self.restart_coord()
        elif kind == "clock_step":
            if not self.faketime_lib:
                return False
            with self.fault_lock:
                coord.term()
            with self.fault_lock:
                # libfaketime preloaded (the faketime wrapper forks, so kill -9 would miss
                # the coordinator); the monotonic clock stays true, as after a real step.
                self.restart_coord(env={"LD_PRELOAD": self.faketime_lib, "FAKETIME": "-1h",
                                        "FAKETIME_DONT_FAKE_MONOTONIC": "1"})
        elif kind in ("kill9_worker", "kill9_trainer"):
            d = rng.choice(self.workers) if kind == "kill9_worker" else self.trainer
            with self.fault_lock:
                d.kill9()
            time.sleep(self.dur(0.2, 2))
            with self.fault_lock:
                d.start()
        elif kind.startswith("sigstop_"):
            d = {"sigstop_coordinator": coord, "sigstop_trainer": self.trainer}.get(kind) or \
                rng.choice(self.workers)
            d.signal(signal.SIGSTOP)
            time.sleep(self.dur(2, 10))
            d.signal(signal.SIGCONT)
        elif kind == "db_lock":
            con = sqlite3.connect(self.db, timeout=10)
            try:
                con.execute("BEGIN IMMEDIATE")
                time.sleep(self.dur(5, 20))
            except sqlite3.Error as e:
                log("db_lock: %s" % e)
                return False
            finally:
                con.close()
        elif kind == "segment_flip":
            games = os.path.join(self.camp, "games")
            segs = sorted(n for n in os.listdir(games) if re.fullmatch(r"seg-\d{6}\.bin", n))
            if len(segs) < 2:
                return False
            path = os.path.join(games, rng.choice(segs[:-1]))
            recs = record_offsets(path)
            if not recs:
                return False
            off, length, wid, seq = rng.choice(recs)
            self.expected_loss.add((wid, seq))
            wlen = len(wid.encode())
            flip_byte(path, rng, off + 2 + wlen + 8, off + length)
        elif kind in ("net_flip", "candidate_move"):
            if kind == "net_flip":
                hexid = self.coord_best_now()
            else:
                rows = db_query(self.db, "select n.hex from open_matches m join nets n on n.id = m.net_a"
                                         " where m.kind = 'gating'")
                hexid = rows[0][0] if rows else None
            path = os.path.join(self.camp, "nets", "%s.xqzn" % hexid) if hexid else None
            if not path or not os.path.exists(path):
                return False
            self.damaged_nets.add(hexid)
            if kind == "net_flip":
                flip_byte(path, rng, 64)
            else:
                os.makedirs(os.path.join(self.camp, "nets", "rejected"), exist_ok=True)
                os.rename(path, os.path.join(self.camp, "nets", "rejected", os.path.basename(path)))
        elif kind == "trainer_diverge":
            path = os.path.join(self.out, "trainer", "trainer.xqzc")
            if not os.path.exists(path):
                return False
            wild = Daemon("trainer (--lr 0:99)", self.trainer.argv + ["--lr", "0:99"],
                          self.trainer.logpath, self.nofile)
            with self.fault_lock:
                self.trainer.term()
                mark = os.path.getsize(self.trainer.logpath)
                wild.start()
            try:
                wild.proc.wait(120)
                applied = True
            except subprocess.TimeoutExpired:
                wild.kill9()
                with open(self.trainer.logpath, errors="replace") as f:
                    f.seek(mark)
                    stepped = sum(1 for l in f if "training step=" in l)
                # A trainer the coordinator kept paced never stepped: nothing to diverge.
                applied = stepped > 0
                if applied:
                    self.violate("a trainer at --lr 0:99 trained on for 120 s (%d progress lines)"
                                 % stepped, key=("diverge", time.time()))
            with self.fault_lock:
                self.trainer.start()
            self.expect_resume()
            return applied
        elif kind == "checkpoint_flip":
            path = os.path.join(self.out, "trainer", "trainer.xqzc")
            if not os.path.exists(path):
                return False
            with self.fault_lock:
                self.trainer.kill9()
                flip_byte(path, rng, 64)
                self.trainer.start()
            self.expect_resume()
        elif kind == "conn_flood":
            socks = []
            try:
                for _ in range(1100):
                    s = socket.socket()
                    s.settimeout(2)
                    s.connect(("127.0.0.1", self.port))
                    socks.append(s)
            except OSError as e:
                log("conn_flood: %d connections, then %s" % (len(socks), e))
            time.sleep(self.dur(5, 15))
            for s in socks:
                s.close()
        elif kind in ("slow_reader", "amplify", "collide", "foreign_peer", "junk", "forged_member"):
            if kind == "forged_member" and self.a.population < 2:
                return False
            mode = {"slow_reader": "slow-reader", "foreign_peer": "foreign",
                    "forged_member": "member"}.get(kind, kind)
            r = subprocess.run([self.peer, mode, self.router, "%d" % self.dur(5, 15)],
                               capture_output=True, text=True, timeout=120)
            log("%s: %s" % (kind, (r.stdout + r.stderr).strip()))
        elif kind == "member_gone":
            if self.a.population < 2:
                return False
            d = self.members[-1]
            if not d.alive():   # still away from the last one
                return False
            with self.fault_lock:
                d.kill9()
            # Healed at once: the member stays away on a timer, and the rounds' invariant
            # holds while it is gone.
            t = threading.Timer(self.dur(100, 120), self.member_back, [d])
            t.daemon = True
            t.start()
        elif kind == "round_net_flip":
            if self.a.population < 2:
                return False
            best = self.coord_best_now()
            rows = db_query(self.db, "select n.hex from open_matches m join nets n on n.id in"
                                     " (m.net_a, m.net_b) where m.kind = 'round'") or []
            cands = sorted({r[0] for r in rows if r[0] != best})
            if not cands:
                rows = db_query(self.db, "select hex from nets where state = 'candidate'"
                                         " order by created desc limit 1") or []
                cands = [r[0] for r in rows if r[0] != best]
            path = os.path.join(self.camp, "nets", "%s.xqzn" % rng.choice(cands)) if cands else None
            if not path or not os.path.exists(path):
                return False
            self.damaged_nets.add(os.path.basename(path).split(".")[0])
            flip_byte(path, rng, 64)
        elif kind == "full_disk":
            if not self.tmpfs:
                return False
            st = os.statvfs(self.camp)
            filler = os.path.join(self.camp, "chaos-filler")
            with open(filler, "wb") as f:
                try:
                    for _ in range(st.f_bavail * st.f_frsize // (1 << 20) + 1):
                        f.write(b"\0" * (1 << 20))
                    f.flush()
                except OSError:
                    pass
            time.sleep(self.dur(5, 20))
            os.unlink(filler)
        return True

    def member_back(self, d):
        """member_gone's end: the member starts again (not once the soak is stopping)."""
        with self.fault_lock:
            if not self.stop.is_set() and not d.alive():
                d.start()

    def coord_best_now(self):
        link = os.path.join(self.camp, "nets", "best.xqzn")
        try:
            return os.path.basename(os.readlink(link)).split(".")[0]
        except OSError:
            return None

    def expect_resume(self):
        """A restarted trainer must come back: it is alive 15 s later."""
        time.sleep(15)
        if not self.trainer.alive() and not self.trainer.expected:
            self.violate("the trainer did not resume after its checkpoint was damaged",
                         key=("resume", time.time()))

    # ---- the run ----------------------------------------------------------------------------
    def run(self):
        a = self.a
        os.makedirs(self.camp, exist_ok=True)
        self.tmpfs = False
        if os.geteuid() == 0 and os.environ.get("XQZ_CHAOS_NS") == "1":
            r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % a.tmpfs_mb, "tmpfs",
                                self.camp], capture_output=True, text=True)
            self.tmpfs = r.returncode == 0
        self.peer = os.path.join(self.bin, "tests", "xqz-chaos-peer")
        self.faketime_lib = next((p for p in ("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                                              "/usr/lib/faketime/libfaketime.so.1")
                                  if os.path.exists(p)), None)
        kinds = [k for k in a.kinds if not (KINDS[k][1] and not self.tmpfs)]
        skipped = sorted(set(a.kinds) - set(kinds))
        if skipped:
            log("not applicable here (needs root and a mount namespace): %s" % ", ".join(skipped))
        self.spool.start()
        self.coord.start()
        if not self.wait_listening(0):
            log("the coordinator did not start; see %s/coord.log" % self.out)
            return 2
        for d in [self.trainer] + self.members + self.workers:
            d.start()
        checker = threading.Thread(target=self.check_loop, daemon=True)
        checker.start()
        start = time.time()
        end = start + a.minutes * 60
        log("soak: seed=%d minutes=%g kinds=%d out=%s router=%s" % (a.seed, a.minutes, len(kinds),
                                                                  self.out, self.router))
        time.sleep(min(a.warmup, a.minutes * 30))
        order = []
        while time.time() < end:
            if not order:   # every kind once per round, in an order drawn from the seed
                order = list(kinds)
                self.rng.shuffle(order)
            kind = order.pop()
            gap = self.rng.uniform(a.gap / 2, a.gap * 1.5)
            self.current = [kind, time.time(), None, False]
            log("fault %s" % kind)
            try:
                applied = self.inject(kind)
            except Exception as e:  # a fault that cannot be applied is not the campaign's failure
                log("fault %s could not be applied: %r" % (kind, e))
                applied = False
            self.current[2] = time.time()
            if applied:
                self.stats[kind][0] += 1
            time.sleep(max(0.0, min(gap, end - time.time())))
            if applied and not self.current[3]:
                self.stats[kind][1] += 1
        # Settle: faults healed, give the campaign a last chance to store what it acked.
        log("settling")
        time.sleep(a.settle)
        self.stop.set()
        checker.join()
        for d in self.workers + [self.trainer] + self.members:
            d.term()
        stopped = self.coord.term()
        if not stopped:
            self.violate("the coordinator did not stop within 30 s of SIGTERM at the end")
        self.check_games(final=True)
        self.check_honest()
        self.coord_restart_check()
        self.check_trainer_resumes()
        self.trainer.term()
        return self.report(kinds, time.time() - start)

    def coord_restart_check(self):
        """One last start: the announced promotions and the campaign id survive it."""
        with self.fault_lock:
            self.restart_coord()
            self.check_identity()
            self.coord.term()

    def report(self, kinds, elapsed):
        for _, kind, _ in self.violations:
            if kind in self.stats:
                self.stats[kind][2] += 1
        print()
        print("%-20s %9s %9s %11s  %s" % ("fault", "injected", "survived", "violations", "what"))
        tot = [0, 0, 0]
        for k in sorted(self.stats):
            if k not in kinds:
                continue
            s = self.stats[k]
            tot = [x + y for x, y in zip(tot, s)]
            print("%-20s %9d %9d %11d  %s" % (k, s[0], s[1], s[2], KINDS[k][0]))
        other = sum(1 for v in self.violations if v[1] not in self.stats)
        print("%-20s %9d %9d %11d" % ("total", tot[0], tot[1], tot[2] + other))
        if other:
            print("%-20s %9s %9s %11d  violations outside any fault's window" % ("(no fault)", "", "", other))
        print()
        rejected = self.rejected_by_log()
        print("games: %d acknowledged, %d stored, %d damaged on purpose, %d acknowledged as"
              " rejected (the workers' logs say why); promotions announced: %d; coordinator RSS"
              " max %.0f MiB; %.1f min" % (getattr(self, "acked_n", 0),
                                           getattr(self, "stored_total", 0),
                                           len(self.expected_loss), len(rejected),
                                           len(self.announced), self.rss_max, elapsed / 60))
        if self.a.population >= 2:
            self.check_rounds()
            print("population: %d members, %d rounds decided (population.log)" %
                  (self.a.population, getattr(self, "rounds", 0)))
        for t, kind, text in self.violations:
            print("violation %s [%s] %s" % (time.strftime("%H:%M:%S", time.localtime(t)), kind, text))
        print("reproduce: scripts/bench/chaos.sh --seed %d --minutes %g --bin %s%s%s" % (
            self.a.seed, self.a.minutes, self.a.bin,
            " --population %d" % self.a.population if self.a.population else "",
            "" if set(self.a.kinds) == set(KINDS) else " --kinds " + ",".join(self.a.kinds)))
        print("chaos: %d violation(s) in %d fault kinds, %d faults injected" % (
            len(self.violations), len(kinds), tot[0]))
        return 0 if not self.violations else 1


def free_port():
    for _ in range(200):
        a = socket.socket()
        a.bind(("127.0.0.1", 0))
        p = a.getsockname()[1]
        b = socket.socket()
        try:
            b.bind(("127.0.0.1", p + 1))
        except OSError:
            continue
        finally:
            a.close()
            b.close()
        return p
    raise SystemExit("chaos: no free pair of loopback ports")


def main():
    p = argparse.ArgumentParser(prog="chaos.sh", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=os.path.join(ROOT, "build"),
                   help="build directory with the daemons, tools/xqz and tests/xqz-chaos-peer")
    p.add_argument("--minutes", type=float, default=5.0, help="length of the soak (default 5)")
    p.add_argument("--seed", type=int, default=1, help="the schedule's seed (default 1)")
    p.add_argument("--gap", type=float, default=8.0, help="mean seconds between faults (default 8)")
    p.add_argument("--warmup", type=float, default=20.0, help="seconds before the first fault")
    p.add_argument("--settle", type=float, default=45.0, help="seconds after the last fault")
    p.add_argument("--kinds", default=",".join(KINDS), help="comma-separated fault kinds (default: all)")
    p.add_argument("--rss-cap-mb", type=int, default=512, help="coordinator RSS bound (default 512)")
    p.add_argument("--tmpfs-mb", type=int, default=3072,
                   help="size limit of the campaign's tmpfs as root (default 3072; it takes"
                        " memory only as the campaign fills it)")
    p.add_argument("--port", type=int, default=0, help="ROUTER port (PUB is the next; default free)")
    p.add_argument("--out", default="", help="keep everything here (default: a temporary folder)")
    p.add_argument("--population", type=int, default=0,
                   help="K >= 2: K trainers, the members of a population (campaign.ini"
                        " population = K); the trainer faults strike member 1 (default 0)")
    p.add_argument("--list", action="store_true", help="list the fault kinds and exit")
    a = p.parse_args()
    if a.list:
        for k, (what, root) in KINDS.items():
            print("%-20s %s%s" % (k, what, " (root)" if root else ""))
        return 0
    a.kinds = [k for k in a.kinds.split(",") if k]
    if a.population == 1 or a.population < 0 or a.population > 16:
        p.error("--population is 0 (one trainer) or 2 to 16")
    bad = [k for k in a.kinds if k not in KINDS]
    if bad:
        p.error("unknown fault kind(s): %s (--list shows them)" % ", ".join(bad))
    a.bin = os.path.abspath(a.bin)
    for exe in ("coordinator/xqz-coordinator", "trainer/xqz-trainer", "worker/xqz-worker",
                "tools/xqz", "tests/xqz-chaos-peer"):
        if not os.access(os.path.join(a.bin, exe), os.X_OK):
            p.error("%s/%s is missing: build with the tests on (cmake -S . -B build && "
                    "cmake --build build) or pass --bin" % (a.bin, exe))
    keep = bool(a.out)
    a.out = os.path.abspath(a.out) if keep else tempfile.mkdtemp(prefix="xqz-chaos.")
    os.makedirs(a.out, exist_ok=True)
    soak = Soak(a)
    rc = 2
    try:
        rc = soak.run()
    finally:
        for d in soak.daemons():
            if d.alive():
                d.kill9()
        if soak.tmpfs:
            if rc != 0:
                shutil.copytree(soak.camp, os.path.join(a.out, "camp-at-end"), dirs_exist_ok=True)
            subprocess.run(["umount", soak.camp])
        if not keep and rc == 0:
            shutil.rmtree(a.out, ignore_errors=True)
        elif rc != 0:
            print("chaos: logs and the campaign are kept in %s" % a.out)
    return rc


if __name__ == "__main__":
    sys.exit(main())
