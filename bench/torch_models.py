"""PyTorch's side of examples/common/models.*: the book's ResNet-18 variant for 28x28
Fashion-MNIST (3x3 first convolution with batch norm, no max-pool), with the same layer names, for
bench/torch_reference.py's T2 and tests/interop/state_dict_torch.py."""
import torch
from torch import nn


class Residual(nn.Module):
    """The book's Residual: two 3x3 convolutions with batch norm, the input added back (through a
    1x1 convolution of the same stride when the shape changes)."""

    def __init__(self, cin, c, use_1x1conv, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, c, 3, padding=1, stride=stride)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.conv3 = nn.Conv2d(cin, c, 1, stride=stride) if use_1x1conv else None
        self.bn1, self.bn2 = nn.BatchNorm2d(c), nn.BatchNorm2d(c)

    def forward(self, x):
        y = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
        return torch.relu(y + (self.conv3(x) if self.conv3 is not None else x))


def stage(cin, c, first):
    return nn.Sequential(*[Residual(cin, c, True, 2) if i == 0 and not first
                           else Residual(c, c, False, 1) for i in range(2)])


def resnet18():
    return nn.Sequential(nn.Sequential(nn.Conv2d(1, 64, 3, padding=1), nn.BatchNorm2d(64),
                                       nn.ReLU()),
                         stage(64, 64, True), stage(64, 128, False), stage(128, 256, False),
                         stage(256, 512, False), nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(),
                         nn.Linear(512, 10))
