#!/usr/bin/env python3
"""PyTorch's side of examples/training: the book's LeNet on Fashion-MNIST, same hyper-parameters
(SGD lr 0.9, batch 256, xavier_uniform_ weights, 10 epochs), same IDX files.

usage: bench/torch_lenet.py FOLDER [--epochs N] [--cpu-epochs N] [--threads N] [--summary PATH]
                             [--resnet-epochs N]
Prints one line per epoch and device (loss, train and test accuracy, seconds, examples/s), as
examples/training does; --summary writes "DEVICE BEST_EPOCH_SECONDS FINAL_TEST_ACCURACY" per
device, which examples/training prints beside its own numbers (TL_TORCH_SUMMARY=PATH);
--resnet-epochs N also trains the book's ResNet-18 variant (bench/torch_models.py, SGD lr 0.05) on
the GPU, summarized as device "cuda-resnet". The batches are gathered from tensors already on the device (a shuffled
index per epoch), the cheapest input pipeline PyTorch has.
"""
import argparse
import gzip
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from torch_models import resnet18


def idx(path):
    raw = gzip.open(path).read() if path.suffix == ".gz" else path.read_bytes()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load(folder, split):
    base = Path(folder)
    pick = lambda stem: next(p for p in (base / stem, base / (stem + ".gz")) if p.exists())
    x = idx(pick(f"{split}-images-idx3-ubyte")).astype(np.float32) / 255.0
    y = idx(pick(f"{split}-labels-idx1-ubyte")).astype(np.int64)
    return torch.from_numpy(x).unsqueeze(1), torch.from_numpy(y)


def lenet():
    net = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.Sigmoid(), nn.AvgPool2d(2, 2),
                        nn.Conv2d(6, 16, 5), nn.Sigmoid(), nn.AvgPool2d(2, 2), nn.Flatten(),
                        nn.Linear(400, 120), nn.Sigmoid(), nn.Linear(120, 84), nn.Sigmoid(),
                        nn.Linear(84, 10))
    for m in net:
        if isinstance(m, (nn.Linear, nn.Conv2d)):
            nn.init.xavier_uniform_(m.weight)
    return net


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


SUMMARY = {}  # device type: (best epoch seconds, final test accuracy), verbose runs only


def xavier(net):
    """d2l's train_ch6 initialization, for every model it trains."""
    for m in net.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d)):
            nn.init.xavier_uniform_(m.weight)
    return net


def train(device, data, epochs, seed=0, verbose=True, model="lenet", max_batches=-1):
    torch.manual_seed(seed)
    (xtr, ytr), (xte, yte) = [(x.to(device), y.to(device)) for x, y in data]
    net = (lenet() if model == "lenet" else xavier(resnet18())).to(device)
    opt = torch.optim.SGD(net.parameters(), lr=0.9 if model == "lenet" else 0.05)
    loss_fn = nn.CrossEntropyLoss()
    n = xtr.shape[0]
    test_acc = 0.0
    for epoch in range(epochs):
        sync(device)
        start = time.perf_counter()
        order = torch.randperm(n, device=device)
        loss_sum = torch.zeros((), device=device)
        hits = torch.zeros((), device=device, dtype=torch.int64)
        seen = 0
        for i in range(0, n, 256):
            if max_batches >= 0 and i // 256 == max_batches:
                break
            b = order[i:i + 256]
            seen += b.shape[0]
            x, y = xtr[b], ytr[b]
            opt.zero_grad()
            logits = net(x)
            loss = loss_fn(logits, y)
            loss.backward()
            opt.step()
            with torch.no_grad():
                loss_sum += loss.detach() * y.shape[0]
                hits += (logits.argmax(1) == y).sum()
        train_loss, train_acc = loss_sum.item() / seen, hits.item() / seen
        sync(device)
        seconds = time.perf_counter() - start
        with torch.no_grad():
            net.eval()
            stop = xte.shape[0] if max_batches < 0 else min(xte.shape[0], 256 * max_batches)
            correct = sum((net(xte[i:i + 256]).argmax(1) == yte[i:i + 256]).sum().item()
                          for i in range(0, stop, 256))
            net.train()
        test_acc = correct / stop
        if not verbose:
            continue
        key = device.type + ("" if model == "lenet" else "-" + model)
        best = SUMMARY.get(key, (seconds, 0))[0]
        SUMMARY[key] = (min(best, seconds), test_acc)
        print(f"  torch {key:5s} epoch {epoch + 1:2d}  loss {train_loss:.3f}  train acc "
              f"{train_acc:.3f}  test acc {test_acc:.3f}  {seconds:6.2f} s  "
              f"{seen / seconds:8.0f} examples/s", flush=True)
    return test_acc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--cpu-epochs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--summary", default="",
                    help="write 'DEVICE BEST_EPOCH_SECONDS FINAL_TEST_ACCURACY' lines here")
    ap.add_argument("--resnet-epochs", type=int, default=0,
                    help="also train the ResNet-18 variant on the GPU (examples/training's "
                         "TL_TRAIN_RESNET_EPOCHS)")
    ap.add_argument("--resnet-cpu-batches", type=int, default=0,
                    help="also train the ResNet-18 variant on the CPU for the first N batches of "
                         "one epoch (examples/training's TL_TRAIN_RESNET_CPU_BATCHES)")
    ap.add_argument("--seeds", type=int, default=1,
                    help="GPU runs from seeds 0..k-1; prints each final test accuracy and the "
                         "mean (examples/training's TL_TRAIN_SEEDS)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    # float32 convolutions in full precision, as tensorlet's default (torch allows TF32 in cuDNN
    # by default; its matmul already keeps float32).
    torch.backends.cudnn.allow_tf32 = False
    data = (load(args.folder, "train"), load(args.folder, "t10k"))
    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} CPU threads")
    if torch.cuda.is_available():
        finals = [train(torch.device("cuda"), data, args.epochs)]
        finals += [train(torch.device("cuda"), data, args.epochs, s, False)
                   for s in range(1, args.seeds)]
        if args.seeds > 1:
            print(f"torch cuda test accuracy after {args.epochs} epochs, seeds 0..{args.seeds - 1}: "
                  + " ".join(f"{a:.3f}" for a in finals)
                  + f"; mean {sum(finals) / len(finals):.3f}")
        if args.resnet_epochs:
            train(torch.device("cuda"), data, args.resnet_epochs, model="resnet")
    if args.cpu_epochs:
        train(torch.device("cpu"), data, args.cpu_epochs)
    if args.resnet_cpu_batches:
        train(torch.device("cpu"), data, 1, model="resnet", max_batches=args.resnet_cpu_batches)
    if args.summary:
        with open(args.summary, "w") as f:
            for device, (seconds, acc) in SUMMARY.items():
                f.write(f"{device} {seconds:.4f} {acc:.4f}\n")


if __name__ == "__main__":
    main()
