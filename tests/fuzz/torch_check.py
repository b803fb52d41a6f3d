#!/usr/bin/env python3
"""Checks the fuzzer's reference against PyTorch: runs each case of `tl_fuzz --dump` with torch and
compares with the reference's result (raise or not, dtype, shape, values within its tolerances).
    build/tests/tl_fuzz --dump --cases 20000 --seed 1 | python tests/fuzz/torch_check.py
Prints each disagreement and, last, "N cases, M disagreements"."""
import json
import math
import sys

import torch

DT = {"bool": torch.bool, "int32": torch.int32, "int64": torch.int64,
      "float32": torch.float32, "float64": torch.float64, "uint8": torch.uint8,
      "int8": torch.int8, "int16": torch.int16, "float16": torch.float16,
      "bfloat16": torch.bfloat16}


def build(inp):
    t = torch.tensor(inp["values"], dtype=torch.float64 if "float" in inp["dtype"] else torch.int64)
    t = t.to(DT[inp["dtype"]]).reshape(inp["base_shape"]).contiguous()
    for v in inp["views"]:
        k = v["kind"]
        if k == "transpose":
            t = t.transpose(v["x"], v["y"])
        elif k == "permute":
            t = t.permute(v["a"])
        elif k == "slice":
            d = v["x"] % t.dim()
            idx = [slice(None)] * t.dim()
            idx[d] = slice(v["y"], v["z"], v["w"])
            t = t[tuple(idx)]
        elif k == "expand":
            t = t.expand(v["a"])
        elif k == "as_strided":
            t = t.as_strided(v["a"], v["b"], v["x"])
        elif k == "unsqueeze":
            t = t.unsqueeze(v["x"])
        elif k == "select":
            t = t.select(v["x"], v["y"])
    return t


def number(s):
    return bool(s["v"]) if s["kind"] == "bool" else (int(s["v"]) if s["kind"] == "int" else float(s["v"]))


BIN = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
       "div": lambda a, b: a / b, "pow": lambda a, b: a ** b,
       "gt": lambda a, b: a > b, "lt": lambda a, b: a < b, "ge": lambda a, b: a >= b,
       "le": lambda a, b: a <= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
       "remainder": lambda a, b: a % b, "floor_divide": lambda a, b: a // b,
       "bitwise_and": lambda a, b: a & b, "bitwise_or": lambda a, b: a | b,
       "bitwise_xor": lambda a, b: a ^ b, "bitwise_left_shift": lambda a, b: a << b,
       "bitwise_right_shift": lambda a, b: a >> b}
UNARY = ("neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "floor", "ceil",
         "trunc", "round", "sign", "square", "reciprocal", "rsqrt", "log1p", "expm1", "log2", "log10",
         "exp2", "erf", "erfc", "tan", "sinh", "cosh", "asin", "acos", "atan", "bitwise_not", "isnan",
         "isinf", "isfinite", "logical_not")
ACTIVATION = {"silu": torch.nn.functional.silu, "softplus": torch.nn.functional.softplus,
              "gelu": torch.nn.functional.gelu,
              "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh")}


def pair(v):
    """A pair argument as the fuzzer gives it: one number, (H, W), or None for [] (a default)."""
    return None if not v else v[0] if len(v) == 1 else tuple(v)


def binary(op, a, b, a_t, b_t):
    if op in BIN:
        return BIN[op](a, b)
    if op in ("maximum", "minimum", "fmod", "atan2"):
        if a_t and b_t:
            return getattr(torch, op)(a, b)
        t, s = (a, b) if a_t else (b, a)  # the number as torch wraps it: in the result dtype
        s = torch.tensor(s, dtype=torch.result_type(t, s))
        return getattr(torch, op)(t, s) if a_t else getattr(torch, op)(s, t)
    # logical ops test each operand for non-zero: a number becomes a 0-d tensor of its own
    a = a if a_t else torch.tensor(a)
    b = b if b_t else torch.tensor(b)
    return getattr(torch, op)(a, b)


def run(c):
    op = c["op"]
    ins = [build(i) for i in c["inputs"]]
    sc = [number(s) for s in c["scalars"]]
    form = c["form"]
    if op in UNARY:
        return getattr(torch, op)(ins[0])
    if op in ACTIVATION:
        return ACTIVATION[op](ins[0])
    if op in BIN or op in ("maximum", "minimum", "fmod", "atan2", "logical_and", "logical_or",
                           "logical_xor"):
        it, si = iter(ins), iter(sc)
        a_t, b_t = form in ("TT", "TS"), form in ("TT", "ST")
        a = next(it) if a_t else next(si)
        b = next(it) if b_t else next(si)
        return binary(op, a, b, a_t, b_t)
    if op == "where":
        it, si = iter(ins[1:]), iter(sc)
        a = next(it) if form in ("TT", "TS") else next(si)
        b = next(it) if form in ("TT", "ST") else next(si)
        return torch.where(ins[0], a, b)
    if op == "clamp":
        src = iter(ins[1:]) if form == "TT" else iter(sc)
        lo = next(src) if c["has_lo"] else None
        hi = next(src) if c["has_hi"] else None
        return torch.clamp(ins[0], lo, hi)
    if op in ("sum", "mean", "prod", "max", "min", "any", "all"):
        fn = {"max": torch.amax, "min": torch.amin}.get(op, getattr(torch, op))
        dims = c["dims"]
        if op == "prod" or op in ("any", "all"):
            # these take one dim at a time in torch: reduce dim by dim (all dims: flatten)
            if not dims:
                r = fn(ins[0].flatten() if ins[0].dim() else ins[0].reshape(1), 0)
                if c["keepdim"]:
                    r = r.reshape([1] * ins[0].dim())
                return r
            nd = max(ins[0].dim(), 1)
            wrapped = [d + nd if d < 0 else d for d in dims]
            if len(set(wrapped)) != len(wrapped) or any(d < 0 or d >= nd for d in wrapped):
                raise IndexError("bad dims")
            r = ins[0]
            for d in sorted(wrapped, reverse=True):
                r = fn(r, d, keepdim=True) if ins[0].dim() else fn(r, d)
            if not c["keepdim"] and ins[0].dim():
                for d in sorted(wrapped, reverse=True):
                    r = r.squeeze(d)
            return r
        if op == "max" or op == "min":
            return fn(ins[0], dims, keepdim=c["keepdim"])
        return fn(ins[0], dims if dims else None, keepdim=c["keepdim"])
    if op in ("softmax", "log_softmax"):
        return getattr(torch, op)(ins[0], c["dim"])
    if op == "logsumexp":
        dims = c["dims"] if c["dims"] else list(range(ins[0].dim()))
        return torch.logsumexp(ins[0], dims, keepdim=c["keepdim"])
    if op in ("var", "std"):
        dims = c["dims"] if c["dims"] else None
        return getattr(torch, op)(ins[0], dims, correction=c["correction"], keepdim=c["keepdim"])
    if op in ("sort", "argsort"):
        kw = dict(dim=c["dim"], descending=bool(c["descending"]), stable=bool(c["stable"]))
        if op == "sort":
            return torch.sort(ins[0], **kw).values
        i = torch.argsort(ins[0], **kw)
        if kw["stable"]:
            return i
        # an unstable order is compared through the values it picks (the fuzzer's runner does so)
        return ins[0].clone() if ins[0].dim() == 0 else torch.gather(ins[0], c["dim"], i)
    if op == "topk":
        largest = bool(c["largest"])
        v = torch.topk(ins[0], c["k"], dim=c["dim"], largest=largest, sorted=bool(c["sorted"])).values
        if not c["sorted"] and v.dim() > 0:
            v = torch.sort(v, dim=c["dim"], descending=largest).values
        return v
    if op == "kthvalue":
        return torch.kthvalue(ins[0], c["k"], dim=c["dim"], keepdim=c["keepdim"]).values
    if op in ("cumsum", "cumprod"):
        return getattr(torch, op)(ins[0], c["dim"], dtype=DT[c["dtype"]] if c["dtype"] else None)
    if op in ("cummax", "cummin"):
        values, indices = getattr(torch, op)(ins[0], c["dim"])
        return indices if c["indices"] else values
    if op == "norm":
        dims = c["dims"] if c["dims"] else None
        return torch.linalg.vector_norm(ins[0], c["p"], dim=dims, keepdim=c["keepdim"])
    if op == "nansum":
        return torch.nansum(ins[0], c["dims"] if c["dims"] else None, keepdim=c["keepdim"])
    if op == "count_nonzero":
        return torch.count_nonzero(ins[0], c["dims"] if c["dims"] else None)
    if op in ("unique", "unique_consecutive"):
        # k picks values, inverse or counts; unique always sorts (sorted=True is torch's default)
        fn = torch.unique if op == "unique" else torch.unique_consecutive
        return fn(ins[0], return_inverse=True, return_counts=True, dim=c["dim"])[c["k"]]
    if op == "bincount":
        return torch.bincount(ins[0], ins[1] if len(ins) > 1 else None, minlength=c["k"])
    if op == "searchsorted":
        return torch.searchsorted(ins[0], ins[1], right=bool(c["right"]))
    if op == "histc":
        return torch.histc(ins[0], bins=c["k"], min=c["lo"], max=c["hi"])
    if op in ("argmax", "argmin"):
        return getattr(torch, op)(ins[0], c["dim"], keepdim=c["keepdim"])
    if op == "matmul":
        return torch.matmul(ins[0], ins[1])
    if op == "outer":
        return torch.outer(ins[0], ins[1])
    if op == "addmm":
        return torch.addmm(ins[0], ins[1], ins[2], beta=sc[0], alpha=sc[1])
    if op in ("cat", "stack"):
        return getattr(torch, op)(ins, c["dim"])
    if op == "index_select":
        return torch.index_select(ins[0], c["dim"], ins[1])
    if op == "gather":
        return torch.gather(ins[0], c["dim"], ins[1])
    if op == "take":
        return torch.take(ins[0], ins[1])
    if op == "masked_select":
        return torch.masked_select(ins[0], ins[1])
    if op in ("scatter_add", "index_add"):
        return getattr(torch, op)(ins[0], c["dim"], ins[1], ins[2])
    if op == "masked_scatter":
        return torch.masked_scatter(ins[0], ins[1], ins[2])
    if op in ("lerp", "masked_fill"):
        # the weight / value: a tensor (TT) or a Python number (TS)
        return getattr(torch, op)(ins[0], ins[1], ins[2] if form == "TT" else sc[0])
    if op == "isclose":
        return torch.isclose(ins[0], ins[1], rtol=c["rtol"], atol=c["atol"],
                             equal_nan=bool(c["equal_nan"]))
    if op == "nan_to_num":  # None: torch's default replacement
        return torch.nan_to_num(ins[0], nan=c["nan"], posinf=c["posinf"], neginf=c["neginf"])
    if op == "flip":
        return torch.flip(ins[0], c["dims"])
    if op == "roll":  # dims [] rolls the flattened tensor
        return torch.roll(ins[0], c["shifts"], c["dims"])
    if op in ("tril", "triu"):
        return getattr(torch, op)(ins[0], c["k"])
    if op == "conv2d":
        return torch.nn.functional.conv2d(ins[0], ins[1], ins[2] if len(ins) > 2 else None,
                                          pair(c["stride"]), pair(c["padding"]),
                                          pair(c["dilation"]), c["groups"])
    if op == "max_pool2d":  # stride [] is torch's default (the kernel)
        return torch.nn.functional.max_pool2d(ins[0], pair(c["kernel"]), pair(c["stride"]),
                                              pair(c["padding"]), pair(c["dilation"]),
                                              bool(c["ceil_mode"]))
    if op == "avg_pool2d":
        return torch.nn.functional.avg_pool2d(ins[0], pair(c["kernel"]), pair(c["stride"]),
                                              pair(c["padding"]), bool(c["ceil_mode"]),
                                              bool(c["count_include_pad"]), c["divisor_override"])
    if op == "adaptive_avg_pool2d":
        return torch.nn.functional.adaptive_avg_pool2d(ins[0], pair(c["output_size"]))
    if op in ("cross_entropy", "nll_loss"):  # inputs: input, target[, weight]
        kw = dict(weight=ins[2] if len(ins) > 2 else None, ignore_index=c["ignore_index"],
                  reduction=c["reduction"])
        if op == "nll_loss":
            return torch.nn.functional.nll_loss(ins[0], ins[1], **kw)
        return torch.nn.functional.cross_entropy(ins[0], ins[1], label_smoothing=c["label_smoothing"],
                                                 **kw)
    if op == "to":
        return ins[0].to(DT[c["target"]])
    if op in ("clone", "contiguous"):
        return getattr(ins[0], op)()
    if op in ("reshape", "view"):
        return getattr(ins[0], op)(c["dims"])
    if op in ("add_", "sub_", "mul_", "div_"):
        getattr(ins[0], op)(ins[1] if form == "TT" else sc[0])
    base = ins[0]
    while base._base is not None:
        base = base._base
    if op == "copy_":
        ins[0].copy_(ins[1])
    elif op == "fill_":
        ins[0].fill_(sc[0])
    return base.reshape(c["inputs"][0]["base_shape"])


def close(want, got, is_float, atol, rtol):
    if not is_float:
        return want == got
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    if math.isinf(want) or math.isinf(got):
        return want == got
    return abs(want - got) <= atol + rtol * abs(want) + 1e-6 * abs(want) * (1 if rtol else 0)


def main():
    n = bad = 0
    kinds = {}
    for line in sys.stdin:
        c = json.loads(line)
        c["keepdim"] = bool(c["keepdim"])
        c["indices"] = bool(c.get("indices", 0))
        c["has_lo"], c["has_hi"] = bool(c["has_lo"]), bool(c["has_hi"])
        c["ref"]["raises"] = bool(c["ref"]["raises"])
        ref = c["ref"]
        n += 1
        try:
            out = run(c)
            err = None
        except Exception as e:  # noqa: BLE001 - torch's errors come as several types
            out, err = None, f"{type(e).__name__}: {str(e).splitlines()[0]}"
        why = None
        if ref["raises"] and err is None:
            why = f"torch returns {out.dtype} {list(out.shape)} where the reference raises ({ref['why']})"
        elif not ref["raises"] and err is not None:
            why = f"torch raises where the reference returns: {err}"
        elif err is None:
            if str(out.dtype).replace("torch.", "") != ref["dtype"]:
                why = f"dtype {out.dtype}, reference {ref['dtype']}"
            elif list(out.shape) != ref["shape"]:
                why = f"shape {list(out.shape)}, reference {ref['shape']}"
            else:
                flat = out.flatten().tolist() if out.dim() else [out.item()]
                isf = "float" in ref["dtype"]
                for i, (w, g) in enumerate(zip(ref["values"], flat)):
                    atol = ref["atol"][i] if i < len(ref["atol"]) else 0
                    if not close(float(w) if isf else w, float(g) if isf else int(g), isf, atol, ref["rtol"]):
                        why = f"element {i}: torch {g}, reference {w}"
                        break
        if why:
            bad += 1
            if ref["raises"] != (err is not None):
                key = f"{c['op']}: " + (f"torch returns, reference raises ({ref['why']})" if ref["raises"]
                                        else f"torch raises ({err[:60]}), reference returns")
            else:
                key = f"{c['op']}: results differ"
            kinds[key] = kinds.get(key, 0) + 1
            if bad <= 30:
                print(f"case {c['index']} ({c['op']}): {why}\n  {line.strip()[:400]}")
    for key, count in sorted(kinds.items(), key=lambda kv: -kv[1]):
        print(f"{count:6d}  {key}")
    print(f"{n} cases, {bad} disagreements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
