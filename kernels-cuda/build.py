#!/usr/bin/env python3
"""Rebuilds kernels-cuda/ptx/*.ptx from kernels-cuda/*.cu with the pinned NVRTC.

    kernels-cuda/toolchain.sh              # once: fetch the pinned wheels
    python3 kernels-cuda/build.py          # rewrite kernels-cuda/ptx/
    python3 kernels-cuda/build.py reduce   # rebuild only kernels-cuda/reduce.cu
    python3 kernels-cuda/build.py --check  # rebuild into a temp dir, fail on any diff,
                                           # then assemble for sm_80 and sm_90 with ptxas
                                           # and fail on spills

NVRTC is called through ctypes from the wheel's libnvrtc.so.12, with the options the
CUDA backend uses for user kernels (crates/gpukit-cuda/src/nvrtc.rs, NVRTC_OPTIONS):
contraction off, precise division and square root, no flush to zero. The output does
not depend on the machine: two runs give byte-identical PTX.
"""
import ctypes
import difflib
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.environ.get("GPUKIT_CUDA_TOOLS", os.path.join(HERE, "..", "target", "cuda-tools"))
ROOT = os.path.join(TOOLS, "root", "nvidia")
NVRTC = os.path.join(ROOT, "cuda_nvrtc", "lib", "libnvrtc.so.12")
INCLUDE = os.path.join(ROOT, "cuda_runtime", "include")
PTXAS = os.path.join(ROOT, "cuda_nvcc", "bin", "ptxas")

# Keep in sync with NVRTC_OPTIONS in crates/gpukit-cuda/src/nvrtc.rs (a Rust test
# reads this line and compares).
OPTIONS = ["--gpu-architecture=compute_80", "--fmad=false", "--prec-div=true", "--prec-sqrt=true", "--ftz=false", "-default-device", "--std=c++17"]
ARCHS = ["sm_80", "sm_90"]


def sources():
    return sorted(f for f in os.listdir(HERE) if f.endswith(".cu"))


def headers():
    """The project's headers, passed to NVRTC by name so no path enters the PTX."""
    return sorted(f for f in os.listdir(HERE) if f.endswith(".cuh"))


def compile_one(lib, name):
    with open(os.path.join(HERE, name), "rb") as f:
        src = f.read()
    hdrs = headers()
    hsrc = []
    for h in hdrs:
        with open(os.path.join(HERE, h), "rb") as f:
            hsrc.append(f.read())
    prog = ctypes.c_void_p()
    n = len(hdrs)
    HArr = ctypes.c_char_p * max(n, 1)
    rc = lib.nvrtcCreateProgram(
        ctypes.byref(prog), src, name.encode(), n,
        HArr(*hsrc) if n else None, HArr(*[h.encode() for h in hdrs]) if n else None)
    if rc != 0:
        sys.exit(f"nvrtcCreateProgram({name}) failed: {rc}")
    opts = OPTIONS + ["-I" + INCLUDE]
    OArr = ctypes.c_char_p * len(opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), OArr(*[o.encode() for o in opts]))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    text = log.value.decode(errors="replace").strip()
    if rc != 0:
        sys.exit(f"NVRTC failed on {name}:\n{text}")
    if text:
        sys.exit(f"NVRTC warnings on {name} (warnings are errors here):\n{text}")
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetPTX(prog, ptx)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return ptx.value


def build(out_dir, only=None):
    if not os.path.exists(NVRTC):
        sys.exit(f"{NVRTC} not found: run kernels-cuda/toolchain.sh first")
    lib = ctypes.CDLL(NVRTC)
    os.makedirs(out_dir, exist_ok=True)
    for name in sources():
        if only and name[:-3] not in only:
            continue
        ptx = compile_one(lib, name)
        with open(os.path.join(out_dir, name[:-3] + ".ptx"), "wb") as f:
            f.write(ptx)


RESOURCES = os.path.join(HERE, "ptx", "resources.tsv")
RESOURCES_HEADER = ("# ptxas -v per kernel (kernels-cuda/build.py --resources; checked by --check):\n"
                    "# arch\tkernel\tregisters\tstatic_shared_bytes\tstack_bytes\tspill_stores\t"
                    "spill_loads\n")


def ptxas_info(ptx_path, arch):
    """Runs ptxas -v on one module; returns (rows, log). Each row is
    (arch, kernel, registers, static shared bytes, stack bytes, spill stores, spill loads)."""
    r = subprocess.run([PTXAS, f"-arch={arch}", "-v", "--warn-on-spills", "--warning-as-error",
                        ptx_path, "-o", os.devnull], capture_output=True, text=True)
    log = r.stdout + r.stderr
    if r.returncode != 0:
        print(log)
        sys.exit(f"ptxas -arch={arch} failed on {ptx_path}")
    rows = []
    cur = None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            cur = [arch, m.group(1), 0, 0, 0, 0, 0]
            rows.append(cur)
            continue
        if cur is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            cur[4], cur[5], cur[6] = int(m.group(1)), int(m.group(2)), int(m.group(3))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            cur[2] = int(m.group(1))
            sm = re.search(r"(\d+) bytes smem", line)
            cur[3] = int(sm.group(1)) if sm else 0
    return rows, log


def resources_text(ptx_dir):
    rows = []
    for f in sorted(os.listdir(ptx_dir)):
        if f.endswith(".ptx"):
            for arch in ARCHS:
                rows.extend(ptxas_info(os.path.join(ptx_dir, f), arch)[0])
    rows.sort(key=lambda r: (r[0], r[1]))
    return RESOURCES_HEADER + "".join("\t".join(str(x) for x in r) + "\n" for r in rows)


def check():
    committed = os.path.join(HERE, "ptx")
    with tempfile.TemporaryDirectory() as tmp:
        build(tmp)
        fresh = sorted(os.listdir(tmp))
        have = sorted(f for f in os.listdir(committed) if f.endswith(".ptx"))
        ok = True
        if fresh != have:
            print(f"PTX files differ: built {fresh}, committed {have}")
            ok = False
        for f in fresh:
            a = open(os.path.join(committed, f)).read().splitlines() if f in have else []
            b = open(os.path.join(tmp, f)).read().splitlines()
            if a != b:
                ok = False
                diff = list(difflib.unified_diff(a, b, "committed/" + f, "rebuilt/" + f, lineterm=""))
                print("\n".join(diff[:40]))
        if not ok:
            sys.exit("kernels-cuda/ptx is not what the sources give: run python3 kernels-cuda/build.py and commit")
        print(f"PTX reproducible: {len(fresh)} modules match the committed files")
    rows = []
    for f in sorted(os.listdir(committed)):
        if not f.endswith(".ptx"):
            continue
        for arch in ARCHS:
            got, log = ptxas_info(os.path.join(committed, f), arch)
            spills = [l for l in log.splitlines() if "spill" in l and not " 0 bytes spill stores, 0 bytes spill loads" in l]
            if spills:
                print("\n".join(spills))
                sys.exit(f"ptxas -arch={arch}: spills in {f}")
            rows.extend(got)
        print(f"ptxas sm_80, sm_90: {f} assembles, no spills")
    rows.sort(key=lambda r: (r[0], r[1]))
    text = RESOURCES_HEADER + "".join("\t".join(str(x) for x in r) + "\n" for r in rows)
    have = open(RESOURCES).read() if os.path.exists(RESOURCES) else ""
    if have != text:
        sys.exit("kernels-cuda/ptx/resources.tsv is not what ptxas reports: "
                 "run python3 kernels-cuda/build.py --resources and commit")
    print(f"resources.tsv matches ptxas: {len(rows)} kernel x arch rows")


if __name__ == "__main__":
    if "--check" in sys.argv[1:]:
        check()
    elif "--resources" in sys.argv[1:]:
        text = resources_text(os.path.join(HERE, "ptx"))  # exits on a ptxas failure
        with open(RESOURCES, "w") as f:
            f.write(text)
        print(f"wrote {RESOURCES}")
    else:
        build(os.path.join(HERE, "ptx"), [a.removesuffix(".cu") for a in sys.argv[1:]])
