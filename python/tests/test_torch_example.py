"""The example users start from: a PyTorch module's own RoPE cache, checked in place with posenc.testing.

The module below is written the way HF transformers' LlamaRotaryEmbedding computes its cache (inv_freq from a
float32 pow, positions times inv_freq as a float32 matmul, cat(freqs, freqs), cos and sin): posenc holds it to the
hf regime's envelope (the float32 steps, correctly rounded, with the stated allowance for torch's pow, cos and
sin). Skipped, saying so, where PyTorch is not installed (Debian: python3-torch).
"""
import numpy as np
import pytest

import posenc
from posenc.testing import PosencMismatch, assert_matches_posenc

torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch); the example is skipped")


class RotaryEmbedding(torch.nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, position_ids):
        inv_freq = self.inv_freq[None, :, None].float()
        pos = position_ids[:, None, :].float()
        freqs = (inv_freq @ pos).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()


def test_a_torch_modules_rope_cache_matches_posenc():
    positions = torch.arange(4096)[None, :]
    cos, sin = RotaryEmbedding(128)(positions)
    cache = torch.stack([cos[0], sin[0]])  # [2, P, head_dim]: HF's [cos | sin] form, a torch tensor passed as is
    report = assert_matches_posenc(cache, "rope", preset="hf-llama", regime="hf", form="hf", head_dim=128,
                                   positions=positions[0].numpy())
    assert report.passed and report.budget_row == "rope.check.envelope"


def test_a_wrong_base_is_reported_with_its_worst_entries():
    positions = torch.arange(512)[None, :]
    cos, sin = RotaryEmbedding(128, base=10000.5)(positions)
    with pytest.raises(PosencMismatch) as e:
        assert_matches_posenc(torch.stack([cos[0], sin[0]]), "rope", preset="hf-llama", regime="hf", form="hf",
                              head_dim=128, positions=np.arange(512))
    assert "| worst: position | column |" in str(e.value)


def test_bf16_tensors_are_read_as_bf16():
    cos, sin = RotaryEmbedding(64)(torch.arange(16)[None, :])
    cache = torch.stack([cos[0], sin[0]]).to(torch.bfloat16)
    r = posenc.check("rope", cache, preset="hf-llama", regime="hf", form="hf", head_dim=64, positions=range(16),
                     in_dtype="bf16")
    assert r.fields["input"]["stored"] == "bf16" and r.passed, r.summary()
