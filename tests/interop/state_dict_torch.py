#!/usr/bin/env python3
"""state_dict interop with PyTorch, both ways: a model that PyTorch saves with
safetensors.torch.save_file(model.state_dict()) loads into the same tensorlet architecture
(tests/interop/state_dict_roundtrip.cpp) and gives PyTorch's outputs, SGD from them
(cross_entropy, backward, two steps with momentum) gives PyTorch's loss, gradients and state, and a
tensorlet model's state_dict loads into PyTorch (strict) and gives tensorlet's outputs. Models: the book's LeNet,
a small net with batch norm (its running statistics and num_batches_tracked buffers), and the
book's ResNet-18 variant (bench/torch_models.py; examples/common/models.h in tensorlet).
usage: state_dict_torch.py BINARY WORKDIR [DEVICE...] (default: cpu, and cuda:0 when torch
sees a GPU). The last line says "state_dict interop: N checks, M differences"."""
import os
import subprocess
import sys

import torch
from safetensors.torch import load_file, save_file
from torch import nn


def lenet():
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.Sigmoid(), nn.AvgPool2d(2, 2),
                         nn.Conv2d(6, 16, 5), nn.Sigmoid(), nn.AvgPool2d(2, 2), nn.Flatten(),
                         nn.Linear(400, 120), nn.Sigmoid(), nn.Linear(120, 84), nn.Sigmoid(),
                         nn.Linear(84, 10))


def with_batch_norm():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(4, 10))


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from torch_models import resnet18  # noqa: E402  (bench/torch_models.py, beside the benchmarks)

MODELS = {"lenet": (lenet, (5, 1, 28, 28)), "bn": (with_batch_norm, (6, 1, 8, 8)),
          "resnet18": (resnet18, (2, 1, 28, 28))}


def main():
    binary, work = sys.argv[1], sys.argv[2]
    devices = sys.argv[3:] or (["cpu", "cuda:0"] if torch.cuda.is_available() else ["cpu"])
    torch.manual_seed(0)
    checks = differences = 0
    for device in devices:
        folder = os.path.join(work, device.replace(":", "_"))
        os.makedirs(folder, exist_ok=True)
        torch_out, torch_grads, torch_stepped = {}, {}, {}
        for name, (make, shape) in MODELS.items():
            model = make()
            x = torch.randn(shape)
            with torch.no_grad():
                model(x)  # a training-mode forward: batch norm's buffers move
            model.eval()
            save_file(model.state_dict(), os.path.join(folder, f"torch_{name}.safetensors"))
            t = torch.randint(0, 10, (shape[0],))
            save_file({"x": x, "t": t}, os.path.join(folder, f"input_{name}.safetensors"))
            with torch.no_grad():
                torch_out[name] = model(x)
            # One SGD step from these weights, as the C++ side takes it.
            model.train()
            opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), t)
            loss.backward()
            torch_grads[name] = {"loss": loss.detach(),
                                 **{"grad." + k: p.grad.clone() for k, p in
                                    model.named_parameters()}}
            opt.step()
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), t).backward()
            opt.step()
            torch_stepped[name] = {k: v.clone() for k, v in model.state_dict().items()}
        subprocess.run([binary, folder, device], check=True)
        for name, (make, shape) in MODELS.items():
            x = load_file(os.path.join(folder, f"input_{name}.safetensors"))["x"]
            ours = load_file(os.path.join(folder, f"ours_out_{name}.safetensors"))["y"]
            checks += 1
            if not torch.allclose(ours, torch_out[name], rtol=1e-4, atol=1e-5):
                differences += 1
                print(f"{device} {name}: PyTorch's weights in tensorlet give "
                      f"{(ours - torch_out[name]).abs().max().item():.3g} off PyTorch's output")
            for what, theirs_map in (("grads", torch_grads[name]),
                                     ("stepped", torch_stepped[name])):
                ours_map = load_file(os.path.join(folder, f"ours_{what}_{name}.safetensors"))
                checks += 1
                if sorted(ours_map) != sorted(theirs_map):
                    differences += 1
                    print(f"{device} {name} {what}: keys differ: "
                          f"{sorted(set(ours_map) ^ set(theirs_map))}")
                    continue
                bad = [k for k in theirs_map
                       if not torch.allclose(ours_map[k].to(theirs_map[k].dtype), theirs_map[k],
                                             rtol=1e-4, atol=1e-5)]
                if bad:
                    differences += 1
                    print(f"{device} {name} {what}: {bad[:5]} differ from PyTorch's")
            model = make()
            model.load_state_dict(load_file(os.path.join(folder, f"ours_{name}.safetensors")),
                                  strict=True)
            model.eval()
            with torch.no_grad():
                theirs = model(x)
            own = load_file(os.path.join(folder, f"ours_own_out_{name}.safetensors"))["y"]
            checks += 1
            if not torch.allclose(theirs, own, rtol=1e-4, atol=1e-5):
                differences += 1
                print(f"{device} {name}: tensorlet's weights in PyTorch give "
                      f"{(theirs - own).abs().max().item():.3g} off tensorlet's output")
    print(f"state_dict interop: {checks} checks, {differences} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
