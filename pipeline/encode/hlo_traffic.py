"""Where a compiled executable's HBM bytes go: its top-level instructions, from the HLO text.

XLA's `cost_analysis()` gives one total ("bytes accessed"); jax 0.10.2 exposes no per-op
cost for a compiled executable. Each instruction of the entry computation (a fusion, a
copy, a custom call) reads its operands from HBM and writes its result there, so the sum of
operand and result sizes per instruction says which ones move the bytes. It is an
estimate beside XLA's total, not XLA's figure: a fusion that reads part of an operand
counts the whole operand, and a Pallas custom call counts its operands and results (XLA
counts only what the kernel declares). Instructions group by the JAX op that made them
(`metadata op_name`), with layer numbers folded (`layer_3/` -> `layer_*/`), so a cost
paid in every layer shows once, summed. Pure text in, numbers out: no JAX import.
"""

import re
from collections import defaultdict
from dataclasses import dataclass

_ITEMSIZE = {
    "pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
    "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16,
}  # fmt: skip
_ARRAY = re.compile(r"\b(" + "|".join(_ITEMSIZE) + r")\[([0-9,]*)\]")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%([\w.\-]+)\s*=\s*(.*?)\s([\w\-]+)\((.*)$")
_OPERAND = re.compile(r"%([\w.\-]+)")
_OP_NAME = re.compile(r'op_name="([^"]*)"')
_KIND = re.compile(r"kind=(k\w+)")
# Instructions that move nothing: aliases of their operand, bookkeeping, or the second half
# of an asynchronous op (`*-done`: counted at its `*-start`).
_FREE = {
    "parameter", "constant", "bitcast", "get-tuple-element", "tuple",
    "after-all", "partition-id", "replica-id", "iota",
}  # fmt: skip


def shape_bytes(shape: str) -> int:
    """Bytes of an HLO shape, a tuple's summed: 'bf16[32,256]{1,0:T(8,128)}' -> 16384."""
    total = 0
    for dtype, dims in _ARRAY.findall(shape):
        n = 1
        for d in filter(None, dims.split(",")):
            n *= int(d)
        total += n * _ITEMSIZE[dtype]
    return total


@dataclass(frozen=True)
class Traffic:
    """HBM bytes of the instructions JAX made for one op (`what`), over every layer."""

    what: str  # the JAX op path, layer numbers folded; the opcode when there is none
    kind: str  # 'fusion (kLoop)', 'copy', 'custom-call', ...
    count: int  # instructions summed here
    bytes: int


def _entry_lines(hlo: str) -> list[str]:
    """The entry computation's instructions, one per line (a custom call's backend config can
    span lines: those continue the instruction above)."""
    body = hlo.split("\nENTRY ", 1)[1].split("\n", 1)[1]
    lines: list[str] = []
    for raw in body.split("\n"):
        if raw.rstrip() == "}":  # the computation's end; `}"` or `},` continue a config
            break
        if _INSTRUCTION.match(raw) or not lines:
            lines.append(raw)
        else:
            lines[-1] += " " + raw
    return lines


def _fold(op_name: str) -> str:
    path = (op_name.partition("/")[2] or op_name) if op_name.startswith("jit(") else op_name
    path = re.sub(r"layer_\d+", "layer_*", path)
    # Pallas and vmap wrappers repeat the kernel's name: keep the path up to the first of them.
    return re.sub(r"/(vmap|jit)\(.*$", "", path)


def instructions(hlo: str) -> list[tuple[str, str, str, int]]:
    """(name, kind, folded op name, bytes) per top-level instruction of the compiled HLO text."""
    shapes: dict[str, str] = {}
    out = []
    for line in _entry_lines(hlo):
        m = _INSTRUCTION.match(line)
        if not m:
            continue
        name, shape, opcode, rest = m.groups()
        shapes[name] = shape
        if opcode in _FREE or opcode.endswith("-done"):
            continue
        args = rest.split(")", 1)[0] if opcode != "custom-call" else rest.split("), custom_call_target", 1)[0]
        moved = shape_bytes(shape) + sum(shape_bytes(shapes.get(o, "")) for o in _OPERAND.findall(args))
        if opcode == "copy-start":  # (destination, source, context): one array copied
            moved = 2 * shape_bytes(shapes.get(_OPERAND.findall(args)[0], ""))
        elif opcode.endswith("-start"):  # collectives: the operands read, the result written once
            moved = sum(shape_bytes(shapes.get(o, "")) for o in _OPERAND.findall(args)) * 2
        kind = _KIND.search(rest)
        what = _OP_NAME.search(rest)
        label = f"{opcode} ({kind.group(1)})" if opcode == "fusion" and kind else opcode
        out.append((name, label, _fold(what.group(1)) if what else opcode, moved))
    return out


def where_bytes_go(hlo: str, top: int = 10) -> list[Traffic]:
    """The `top` ops that move the most bytes (per `instructions`), largest first; the last
    entry, "(all)", sums every instruction (the total the shares are of)."""
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for _, kind, what, moved in instructions(hlo):
        groups[(what, kind)].append(moved)
    ranked = sorted(groups.items(), key=lambda kv: -sum(kv[1]))
    out = [Traffic(what, kind, len(v), sum(v)) for (what, kind), v in ranked[:top]]
    every = [n for v in groups.values() for n in v]
    return [*out, Traffic("(all)", "", len(every), sum(every))]
