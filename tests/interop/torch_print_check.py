#!/usr/bin/env python3
"""PyTorch's reprs for the set_printoptions cases of tests/test_printing.cpp, to check its expected
strings on a machine with torch (checked 2026-11-27 with PyTorch 2.11: all ten equal)."""
import torch
x = torch.tensor([0.1, 2.5])
out = []
torch.set_printoptions(precision=2); out.append(repr(x))
torch.set_printoptions(threshold=5, edgeitems=2); out.append(repr(torch.arange(10))); out.append(repr(torch.arange(5)))
torch.set_printoptions(profile="default"); torch.set_printoptions(linewidth=20); out.append(repr(torch.arange(10)))
torch.set_printoptions(linewidth=80, sci_mode=True); out.append(repr(x)); out.append(repr(torch.tensor([1., 2., 3.])))
torch.set_printoptions(sci_mode=False); out.append(repr(torch.tensor([1e-5, 1.])))
torch.set_printoptions(precision=4); out.append(repr(torch.tensor([1e-5, 1.])))
torch.set_printoptions(profile="short"); out.append(repr(x))
torch.set_printoptions(profile="default"); torch.set_printoptions(threshold=0, edgeitems=1); out.append(repr(torch.arange(6).view(2, 3)))
for o in out: print(repr(o))
