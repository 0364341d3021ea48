"""The real-code corpus of ``benchmarks/realcode.py``: code nobody on this team wrote, from pinned
PyPI packages that the benchmark installs into its own venv (``.bench/venv-realcode``), each
model built from a tiny config with random weights (``torch.manual_seed``), on the CPU, with no
download. Each entry's ``build()`` runs in the child (``_model_child.py --realcode``) and returns
``(config, callable, kwargs)``; the callable is what ``torch.compile`` gets.

This module imports nothing heavy at module level (the parent reads the table without torch).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

#: What the venv gets, pinned (torch CPU, no torchvision: diffusers imports it when present and
#: torchvision 0.28 does not load its ops against torch 2.13.0+cpu).
REQUIREMENTS = [
    "torch==2.13.0", "diffusers==0.42.1", "x-transformers==2.31.10", "vector-quantize-pytorch==1.32.0",
    "st-moe-pytorch==0.1.8", "torchdiffeq==0.2.5", "mambapy==1.2.0", "kornia==0.9.0", "torchsde==0.2.6",
    "reformer-pytorch==1.4.4", "gpytorch==1.15.2", "zuko==1.6.0", "e3nn==0.6.0",
    "torch-optimizer==0.3.0", "mixture-of-experts==0.2.3", "nflows==0.14", "entmax==1.3",
    "pytorch-metric-learning==2.8.1", "torchmetrics==1.9.0", "pytorch-crf==0.7.2", "torchode==1.0.1",
    "normflows==1.7.3", "torch-geometric==2.8.1", "geomloss==0.3.1", "nnaudio==0.3.4", "torchcde==0.2.5",
    "monai==1.6.1", "stable-baselines3==2.9.2", "pytorch-tabnet==4.1.0", "performer-pytorch==1.1.4",
    "pyro-ppl==1.9.2", "botorch==0.18.1", "bs-roformer==1.2.4", "prodigyopt==1.1.2",
    "torchkbnufft==1.5.2", "deepxde==1.15.0", "linear-attention-transformer==0.19.1", "pomegranate==1.1.2",
    "opacus==1.6.0", "pot==0.9.7.post1", "ema-pytorch==0.8.3", "auraloss==0.4.0",
    "pytorch-optimizer==4.1.0", "fast-pytorch-kmeans==0.2.2", "pytorch-msssim==1.0.0", "julius==0.2.8",
    "pytorch-tcn==1.2.3", "tab-transformer-pytorch==0.6.1", "torch-ema==0.3", "local-attention==1.11.2",
    "pytorch-minimize==0.1.0", "geoopt==0.5.1", "cooper-optim==1.0.1", "nystrom-attention==0.0.14",
    "siren-pytorch==0.1.7", "linformer==0.2.3", "native-sparse-attention-pytorch==0.2.3",
    "ring-attention-pytorch==0.5.20",
    # round 15 (pykan imports pandas without declaring it)
    "pykan==0.2.8", "pandas==3.1.1", "routing-transformer==1.6.1", "sinkhorn-transformer==0.11.4",
    "colt5-attention==0.11.2", "ncps==1.0.1", "lion-pytorch==0.2.5",
    # round 16
    "egnn-pytorch==0.2.8", "en-transformer==1.6.6", "compressive-transformer-pytorch==0.4.0",
    "torchcrf==1.1.0", "recurrent-memory-transformer-pytorch==0.7.0", "freia==0.2",
    # round 17
    "kmeans-pytorch==0.3", "flowtorch==0.8", "h-transformer-1d==0.1.9", "mega-pytorch==0.1.0",
    "mlm-pytorch==0.1.0", "charformer-pytorch==0.0.4",
    # round 18 (product-key-memory came in with linear-attention-transformer)
    "soft-moe-pytorch==0.1.9", "product-key-memory==0.3.0", "MEGABYTE-pytorch==0.3.6", "mixture-of-attention==0.0.25",
    "memory-efficient-attention-pytorch==0.1.6", "speculative-decoding==0.2.0",
    # round 19
    "efficientnet-pytorch==0.7.1", "snntorch==1.0.0", "fair-esm==2.0.0", "pfrl==0.4.0", "torchlibrosa==0.1.0",
    "asteroid-filterbanks==0.4.0",
    # round 20 (tensorly came in with tensorly-torch, which imports it without declaring it)
    "sb3-contrib==2.9.2", "torch-struct==0.5", "torch-dct==0.1.6", "tensorly-torch==0.5.0", "tensorly==0.9.0",
    "pytorch-frame==0.3.0",
    # round 21
    "neuraloperator==2.0.0", "torchani==2.9.0", "pykeen==1.11.1", "torch-rechub==0.9.0", "e2cnn==0.2.3",
    # round 22 (torch-harmonics 0.8.0: 0.9 needs torch>=2.14)
    "skorch==1.4.0", "pytorch-ignite==0.5.5", "roma==1.8.0", "schedulefree==1.4.1", "torch-harmonics==0.8.0",
    # round 23 (flow-matching imports tqdm and torchsurv pandas, without declaring them; tqdm came with
    # the corpus before, pandas with round 15)
    "flow-matching==1.0.10", "ptwt==1.0.1", "torch-pruning==1.6.1", "torchsurv==0.2.0", "captum==0.9.0",
    "tqdm==4.70.1",
    # round 24
    "galore-torch==1.0", "madgrad==1.3", "rotary-embedding-torch==0.9.1", "torch-kmeans==0.2.0", "torchbnn==1.2",
    # round 25
    "dadaptation==3.2", "came-pytorch==0.1.3", "pytorch-ranger==0.1.1", "hyper-connections==0.4.11",
    "tensordict==0.15.3",
    # round 26
    "torch-pca==1.1.0", "heavyball==3.2.1", "torchjd==0.18.0", "torchbayesian==0.2.1", "torch-cgd==0.0.2",
    # round 27 (torchdr imports matplotlib without declaring it)
    "torch-kf==0.4.3", "torchrbf==1.0.0", "torchdr==0.5", "torch-optimi==0.3.3", "torch-levenberg-marquardt==1.2.3",
    "matplotlib==3.11.2",
    # round 28 (pytorch-wavelets imports pywt and pkg_resources without declaring them; pkg_resources is
    # gone from setuptools 81 on)
    "pytorch-wavelets==1.3.0", "tntorch==1.1.2", "torch-interpol==0.3.0", "torchnmf==0.3.5", "torch-linode==0.3.0",
    "pywavelets==1.9.0", "setuptools==80.10.2",
    # round 29 (pycox trains through torchtuples, which it declares; pytorch-kinematics pulls
    # arm-pytorch-utilities, lxml and absl-py)
    "xitorch==0.5.1", "torch-pme==0.5.0", "pycox==0.3.0", "torchtuples==0.2.2", "torch-hd==5.8.4",
    "pytorch-kinematics==0.10.0",
    # round 30 (cherry-rl imports six without declaring it, and gym 0.26's `ImageEncoder` is gone, which
    # its wrappers subclass on import: gym 0.23.1 is pinned; posteriors pulls torchopt and optree)
    "torchimize==0.0.16", "torchlie==0.1.0", "posteriors==0.1.3", "cherry-rl==0.2.0", "higher==0.2.1",
    "gym==0.23.1", "six==1.17.0",
    # round 31
    "pyhessian==0.1", "geotorch==0.4.0", "torchsparsegradutils==0.2.7", "torcheval==0.0.7",
    "pythae==0.1.2",
    # round 32 (poutyne pulls torchmetrics and lightning-utilities, lampe zuko and h5py)
    "torchstain==1.4.1", "lampe==0.9.0", "torch-lr-finder==0.2.2", "poutyne==1.19.0",
    # round 33 (deepctr-torch imports requests without declaring it and pulls scikit-learn;
    # pytorch-accelerated pulls accelerate 1.16.0 and huggingface_hub; torchkeras declares nothing and
    # imports accelerate, pandas, tqdm and IPython, its metrics are torchmetrics')
    "deepctr-torch==0.3.0", "requests==2.34.2", "pytorch-warmup==0.2.0", "pytorch-accelerated==0.1.61",
    "rtdl-revisiting-models==0.0.2", "torchkeras==4.0.5", "ipython==9.19.1",
    # round 34 (torchtnt imports pkg_resources without declaring it, setuptools pinned with round 28;
    # torchtnt pulls tensorboard, psutil and pyre-extensions, skrl gymnasium and tensorboard,
    # dasp-pytorch scipy, torch-ppr torch-max-mem)
    "torchtnt==0.2.4", "skrl==2.1.1", "torchfm==0.7.0", "dasp-pytorch==0.0.1", "torch-ppr==0.0.8",
    # round 35 (sbi pulls skorch, zuko, nflows, scikit-learn, tensorboard and matplotlib, nbeats-pytorch
    # pandas and matplotlib, each at the corpus' version)
    "torchbearer==0.5.5", "nbeats-pytorch==1.6.0", "pytorch-nlp==0.5.0", "rtdl-num-embeddings==0.0.12", "sbi==0.27.0",
    # round 36 (torchcast builds from its sdist and pulls pybind11 3.1.0 for that; torchcast imports
    # pandas, pinned with round 15; torch-ac imports gymnasium, pinned with round 34's skrl; tabm's
    # embeddings are rtdl-num-embeddings', pinned with round 35; pysdtw's kernels are numba's, in the
    # corpus venv before at 0.68.1)
    "torchcast==0.2", "tabm==0.0.3", "ranger21==0.1.0", "torch-ac==1.4.0", "pysdtw==0.0.5", "pybind11==3.1.0",
    # round 37 (neurodiffeq pulls dill 0.4.1, ordered-set 4.1.0 and seaborn 0.13.2, brevitas dependencies 2.0.1
    # and unfoldNd 0.2.3, hummingbird-ml onnx 1.16.1 and onnxconverter-common 1.16.0; hummingbird's models are
    # scikit-learn's, at the corpus' version)
    "neurodiffeq==0.7.0", "torchkge==0.17.7", "brevitas==0.13.4", "hummingbird-ml==0.4.12", "diffsort==0.2.0",
]


@dataclass
class Entry:
    name: str
    package: str  # import name; the hook's scope and the coverage marker
    dist: str  # distribution==version it comes from
    what: str  # one line: the model and what is called
    build: Callable
    check: list[str] = field(default_factory=list)  # package-relative paths `graphmend check` scans
    grad: bool = False  # a training step (autograd on)
    training: bool = False  # its modules run in training mode (nn.Module.train())
    loggers: tuple[str, ...] = ()
    # GraphMend's scope for the package: "module" where the compiled caller is the user's code
    # (a sampler loop calling `scheduler.step`, a function calling `odeint`), so no entry inside
    # the package reaches the code
    scope: str = "default"
    # packages the entry's code runs through, checked, mended and scored with it (gpytorch's
    # computations are linear_operator's: a break there has no frame in gpytorch)
    also: tuple[str, ...] = ()

    @property
    def packages(self) -> tuple[str, ...]:
        return (self.package, *self.also)

    @property
    def marker(self) -> str:
        """The path parts of the files the child covers and traces: each package's folder, or its
        module where the distribution is one file (`rtdl_num_embeddings.py`)."""
        return ",".join(m for p in self.packages for m in (f"/{p}/", f"/{p}.py"))


# --------------------------------------------------------------------------------------------------
# diffusers 0.42.1


def _diffusers_unet2d_cond():
    import torch
    from diffusers import UNet2DConditionModel

    torch.manual_seed(0)
    cfg = dict(sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
               down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
               up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=32,
               attention_head_dim=8, norm_num_groups=8)
    model = UNet2DConditionModel(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    inputs = {"sample": torch.randn(2, 4, 8, 8, generator=g), "timestep": torch.tensor([10, 500]),
              "encoder_hidden_states": torch.randn(2, 6, 32, generator=g)}
    return cfg, model, inputs


def _diffusers_vae():
    import torch
    from diffusers import AutoencoderKL

    torch.manual_seed(0)
    cfg = dict(in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(32, 64),
               down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
               up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"), layers_per_block=1, norm_num_groups=8,
               sample_size=16)
    model = AutoencoderKL(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    return cfg, model, {"sample": torch.randn(1, 3, 16, 16, generator=g)}


def _diffusers_flux():
    import torch
    from diffusers import FluxTransformer2DModel

    torch.manual_seed(0)
    cfg = dict(patch_size=1, in_channels=8, num_layers=1, num_single_layers=1, attention_head_dim=16,
               num_attention_heads=2, joint_attention_dim=32, pooled_projection_dim=32,
               axes_dims_rope=(4, 6, 6))
    model = FluxTransformer2DModel(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    seq, txt = 16, 6
    img_ids = torch.zeros(seq, 3)
    img_ids[:, 1] = torch.arange(seq) // 4
    img_ids[:, 2] = torch.arange(seq) % 4
    inputs = {"hidden_states": torch.randn(1, seq, 8, generator=g),
              "encoder_hidden_states": torch.randn(1, txt, 32, generator=g),
              "pooled_projections": torch.randn(1, 32, generator=g), "timestep": torch.tensor([0.5]),
              "img_ids": img_ids, "txt_ids": torch.zeros(txt, 3)}
    return cfg, model, inputs


def _diffusers_dit():
    import torch
    from diffusers import DiTTransformer2DModel

    torch.manual_seed(0)
    cfg = dict(num_attention_heads=2, attention_head_dim=16, in_channels=4, out_channels=8, num_layers=2,
               sample_size=8, patch_size=2, num_embeds_ada_norm=10, norm_num_groups=8)
    model = DiTTransformer2DModel(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    inputs = {"hidden_states": torch.randn(2, 4, 8, 8, generator=g), "timestep": torch.tensor([1, 7]),
              "class_labels": torch.tensor([2, 5])}
    return cfg, model, inputs


class _SamplerStep:
    """One denoising step as a pipeline writes it: the scheduler's `step` on a fixed model output."""

    def __init__(self, scheduler, timestep):
        self.scheduler, self.timestep = scheduler, timestep

    def __call__(self, model_output, sample):
        self.scheduler._step_index = None  # every call is a first step: `step` looks its index up
        return self.scheduler.step(model_output, self.timestep, sample, return_dict=False)[0]


def _diffusers_euler_step():
    import torch
    from diffusers import EulerDiscreteScheduler

    cfg = dict(num_train_timesteps=100)
    sched = EulerDiscreteScheduler(**cfg)
    sched.set_timesteps(10)
    g = torch.Generator().manual_seed(1)
    t = sched.timesteps[3]
    return cfg, _SamplerStep(sched, t), {"model_output": torch.randn(1, 4, 8, 8, generator=g),
                                         "sample": torch.randn(1, 4, 8, 8, generator=g)}


def _diffusers_ddim_step():
    import torch
    from diffusers import DDIMScheduler

    cfg = dict(num_train_timesteps=100)
    sched = DDIMScheduler(**cfg)
    sched.set_timesteps(10)
    g = torch.Generator().manual_seed(1)
    return cfg, _SamplerStep(sched, int(sched.timesteps[3])), {
        "model_output": torch.randn(1, 4, 8, 8, generator=g), "sample": torch.randn(1, 4, 8, 8, generator=g)}


# --------------------------------------------------------------------------------------------------
# lucidrains-style packages and others


def _x_transformers_decoder():
    import torch
    from x_transformers import Decoder, TransformerWrapper

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, max_seq_len=32, attn_layers=dict(dim=32, depth=2, heads=2, rotary_pos_emb=True))
    model = TransformerWrapper(num_tokens=64, max_seq_len=32,
                               attn_layers=Decoder(dim=32, depth=2, heads=2, rotary_pos_emb=True)).eval()
    g = torch.Generator().manual_seed(1)
    return cfg, model, {"x": torch.randint(0, 64, (2, 16), generator=g)}


class _TrainStep:
    """A training step as a user writes it: forward, loss, backward, optimizer step; returns the loss
    and the updated parameters."""

    def __init__(self, model, loss_fn, lr=1e-2):
        import torch

        self.model, self.loss_fn = model, loss_fn
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)

    def step(self, **batch):
        """zero_grad, loss, backward, optimizer step: the loss."""
        self.opt.zero_grad(set_to_none=True)
        loss = self.loss_fn(self.model, **batch)
        loss.backward()
        self.opt.step()
        return loss

    def __call__(self, **batch):
        loss = self.step(**batch)
        return {"loss": loss.detach(), **{n: p.detach().clone() for n, p in self.model.named_parameters()}}


def _mse(model, x, y):
    import torch

    return torch.nn.functional.mse_loss(model(x), y)


def _x_transformers_train():
    import torch
    from x_transformers import Decoder, TransformerWrapper

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, max_seq_len=32, attn_layers=dict(dim=32, depth=1, heads=2))
    model = TransformerWrapper(num_tokens=64, max_seq_len=32, attn_layers=Decoder(dim=32, depth=1, heads=2))

    def loss_fn(m, x):
        logits = m(x[:, :-1])
        return torch.nn.functional.cross_entropy(logits.transpose(1, 2), x[:, 1:])

    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"x": torch.randint(0, 64, (2, 17), generator=g)}


def _vector_quantize_train():
    import torch
    from vector_quantize_pytorch import VectorQuantize

    torch.manual_seed(0)
    cfg = dict(dim=16, codebook_size=32, decay=0.8, commitment_weight=1.0)
    model = VectorQuantize(**cfg).train()
    g = torch.Generator().manual_seed(1)
    return cfg, model, {"x": torch.randn(2, 8, 16, generator=g)}


def _vector_quantize_eval():
    import torch
    from vector_quantize_pytorch import ResidualVQ

    torch.manual_seed(0)
    cfg = dict(dim=16, num_quantizers=2, codebook_size=32)
    model = ResidualVQ(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    return cfg, model, {"x": torch.randn(2, 8, 16, generator=g)}


def _st_moe():
    import torch
    from st_moe_pytorch import MoE

    torch.manual_seed(0)
    cfg = dict(dim=16, num_experts=4, gating_top_n=2, threshold_train=0.2, threshold_eval=0.2,
               capacity_factor_train=1.25, capacity_factor_eval=2.0)
    model = MoE(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    return cfg, model, {"x": torch.randn(2, 8, 16, generator=g)}


def _mambapy():
    import torch
    from mambapy.mamba import Mamba, MambaConfig

    torch.manual_seed(0)
    cfg = MambaConfig(d_model=16, n_layers=2, d_state=8, expand_factor=2)
    model = Mamba(cfg).eval()
    g = torch.Generator().manual_seed(1)
    return {"d_model": 16, "n_layers": 2, "d_state": 8}, model, {"x": torch.randn(2, 8, 16, generator=g)}


class _ODE:
    """Solve a small learned ODE with an adaptive solver (torchdiffeq.odeint)."""

    def __init__(self, method):
        import torch

        torch.manual_seed(0)
        self.func = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
        self.method = method

    def __call__(self, y0, t):
        from torchdiffeq import odeint

        return odeint(lambda _t, y: self.func(y), y0, t, method=self.method, rtol=1e-3, atol=1e-4)


def _torchdiffeq(method):
    def build():
        import torch

        g = torch.Generator().manual_seed(1)
        return {"method": method}, _ODE(method), {"y0": torch.randn(2, 4, generator=g),
                                                 "t": torch.linspace(0.0, 1.0, 3)}
    return build


# --------------------------------------------------------------------------------------------------
# kornia 0.9.0 (differentiable computer vision) and torchsde 0.2.6 (SDE solvers): added after the
# detection work on the entries above, so nothing in GraphMend was tuned on them


def _kornia_augment():
    import torch
    import kornia.augmentation as K

    torch.manual_seed(0)
    aug = K.AugmentationSequential(K.RandomHorizontalFlip(p=0.5), K.ColorJitter(0.2, 0.2, 0.2, 0.1, p=0.8),
                                   K.RandomAffine(degrees=15.0, translate=(0.1, 0.1), p=0.5))
    g = torch.Generator().manual_seed(1)
    return {"augmentations": "hflip, color jitter, affine"}, _Augment(aug), \
        {"images": torch.rand(4, 3, 16, 16, generator=g)}


class _Augment:
    """The user's call of the pipeline (AugmentationSequential.forward takes its inputs positionally)."""

    def __init__(self, aug):
        self.aug = aug

    def __call__(self, images):
        import torch

        torch.manual_seed(2)  # the same random parameters on every call (eager, compiled, mended)
        return self.aug(images)


class _KorniaOps:
    """A user's preprocessing function over kornia's functional API."""

    def __call__(self, img):
        import torch
        import kornia

        x = kornia.filters.gaussian_blur2d(img, (5, 5), (1.5, 1.5))
        x = kornia.geometry.transform.rotate(x, torch.full((img.shape[0],), 30.0))
        hsv = kornia.color.rgb_to_hsv(x)
        edges = kornia.filters.sobel(x)
        return x, hsv, edges


def _kornia_ops():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"ops": "gaussian_blur2d, rotate, rgb_to_hsv, sobel"}, _KorniaOps(), \
        {"img": torch.rand(2, 3, 16, 16, generator=g)}


class _SDESolve:
    """Integrate a small neural SDE with torchsde.sdeint (Euler-Maruyama, fixed Brownian seed)."""

    def __init__(self):
        import torch

        class SDE(torch.nn.Module):
            noise_type, sde_type = "diagonal", "ito"

            def __init__(self):
                super().__init__()
                self.net = torch.nn.Linear(4, 4)

            def f(self, t, y):
                return torch.tanh(self.net(y))

            def g(self, t, y):
                return 0.1 * torch.sigmoid(y)

        torch.manual_seed(0)
        self.sde = SDE()

    def __call__(self, y0, ts):
        import torchsde

        bm = torchsde.BrownianInterval(t0=ts[0], t1=ts[-1], size=y0.shape, entropy=0)
        return torchsde.sdeint(self.sde, y0, ts, bm=bm, method="euler", dt=0.1)


def _torchsde():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"method": "euler", "dt": 0.1}, _SDESolve(), {"y0": torch.randn(2, 4, generator=g),
                                                        "ts": torch.linspace(0.0, 0.5, 3)}


# --------------------------------------------------------------------------------------------------
# reformer-pytorch 1.4.4 (LSH attention) and gpytorch 1.15.2 (Gaussian processes): added with kornia
# and torchsde, measured before anything was changed for them


def _reformer():
    import torch
    from reformer_pytorch import ReformerLM

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, dim=32, depth=2, max_seq_len=64, heads=2, bucket_size=8, n_hashes=2, causal=True,
               lsh_dropout=0.0, ff_dropout=0.0, post_attn_dropout=0.0, layer_dropout=0.0)
    model = ReformerLM(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    return cfg, model, {"x": torch.randint(0, 64, (1, 32), generator=g)}


class _GP:
    """An exact GP regression model (RBF kernel) fitted to nothing: the user's predict step and
    the training loss, as in GPyTorch's tutorial."""

    def __init__(self, train: bool):
        import torch
        import gpytorch

        class Model(gpytorch.models.ExactGP):
            def __init__(self, x, y, likelihood):
                super().__init__(x, y, likelihood)
                self.mean_module = gpytorch.means.ConstantMean()
                self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

            def forward(self, x):
                return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))

        torch.manual_seed(0)
        self.train_x = torch.linspace(0, 1, 12)
        self.train_y = torch.sin(self.train_x * 6.0)
        self.likelihood = gpytorch.likelihoods.GaussianLikelihood()
        self.model = Model(self.train_x, self.train_y, self.likelihood)
        self.mll = gpytorch.mlls.ExactMarginalLogLikelihood(self.likelihood, self.model)
        self.training = train
        (self.model.train() if train else self.model.eval())
        (self.likelihood.train() if train else self.likelihood.eval())

    def __call__(self, x):
        if self.training:
            return self.mll(self.model(self.train_x), self.train_y)
        pred = self.likelihood(self.model(x))
        return pred.mean, pred.variance


def _gpytorch(train: bool):
    def build():
        import torch

        return {"kernel": "ScaleKernel(RBF)", "n_train": 12}, _GP(train), {"x": torch.linspace(0.05, 0.95, 5)}
    return build


# --------------------------------------------------------------------------------------------------
# zuko 1.6.0 (normalizing flows) and e3nn 0.6.0 (E(3)-equivariant networks): a third round of code
# nobody tuned on, measured before anything was changed for them


class _Flow:
    """A conditional neural spline flow: the user's log-likelihood of samples given a context."""

    def __init__(self):
        import torch
        import zuko

        torch.manual_seed(0)
        self.flow = zuko.flows.NSF(features=3, context=2, transforms=2, hidden_features=[16, 16])

    def __call__(self, x, c):
        return self.flow(c).log_prob(x)


def _zuko():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"flow": "NSF", "features": 3, "context": 2, "transforms": 2}, _Flow(), \
        {"x": torch.randn(4, 3, generator=g), "c": torch.randn(4, 2, generator=g)}


def _e3nn():
    import torch
    from e3nn import o3

    torch.manual_seed(0)
    irreps_in1, irreps_in2, irreps_out = o3.Irreps("2x0e + 1x1o"), o3.Irreps("1x0e + 1x1o"), o3.Irreps("2x0e + 1x1o")
    tp = o3.FullyConnectedTensorProduct(irreps_in1, irreps_in2, irreps_out)
    g = torch.Generator().manual_seed(1)
    return {"irreps": "2x0e+1x1o (x) 1x0e+1x1o -> 2x0e+1x1o"}, tp, \
        {"x": torch.randn(4, irreps_in1.dim, generator=g), "y": torch.randn(4, irreps_in2.dim, generator=g)}


# --------------------------------------------------------------------------------------------------
# Added on 2026-12-06, and NOT untuned: each first check missed breaks, and what that showed was
# built for it. nflows 0.14 (normalizing flows; 0 of 3 Dynamo sites at first): calls through a
# local bound to a function, `self.m()` reaching subclass overrides, boolean masks held in names,
# parameters a caller passes tensors to, five calls deep. entmax 1.3 (sparsemax; 0 of 2): custom
# autograd Functions (`apply` -> `forward`, `cls.m()`), masks reshaped with `.squeeze`.
# pytorch-metric-learning 2.8.1 (losses; 2 of 6): `self.compute_loss()` in a base class reaching
# the overrides in other files' subclasses, masks first bound to None.


def _nflows():
    import torch
    from nflows.nn.nets import ResidualNet
    from nflows.transforms import PiecewiseRationalQuadraticCouplingTransform

    torch.manual_seed(0)
    t = PiecewiseRationalQuadraticCouplingTransform(
        torch.tensor([1, 0, 1, 0]), lambda i, o: ResidualNet(i, o, hidden_features=16, num_blocks=1),
        num_bins=4, tails="linear", tail_bound=3.0).eval()
    g = torch.Generator().manual_seed(1)
    return {"transform": "PiecewiseRationalQuadraticCoupling", "features": 4, "bins": 4}, t, \
        {"inputs": torch.randn(5, 4, generator=g) * 2}


def _entmax():
    import torch
    from entmax import Sparsemax

    g = torch.Generator().manual_seed(1)
    return {"module": "Sparsemax(k=3)"}, Sparsemax(dim=-1, k=3), {"X": torch.randn(4, 6, generator=g)}


class _Losses:
    """Five pytorch-metric-learning losses on one batch, summed: the user's training loss."""

    def __init__(self):
        from pytorch_metric_learning import losses

        self.losses = [losses.TripletMarginLoss(), losses.ContrastiveLoss(), losses.MultiSimilarityLoss(),
                       losses.NTXentLoss(), losses.CircleLoss()]

    def __call__(self, embeddings, labels):
        return sum(loss(embeddings, labels) for loss in self.losses)


def _pml():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"losses": "TripletMargin, Contrastive, MultiSimilarity, NTXent, Circle"}, _Losses(), \
        {"embeddings": torch.randn(8, 4, generator=g), "labels": torch.tensor([0, 0, 1, 1, 2, 2, 3, 3])}


# --------------------------------------------------------------------------------------------------
# torch-optimizer 0.3.0 (optimizers) and mixture-of-experts 0.2.3 (lucidrains' top-2 gated MoE):
# a fourth round of code nobody tuned on, measured before anything was changed for them


class _OptStep:
    """`optimizer.step()` compiled on its own, as PyTorch's recipe for compiling optimizers does:
    the gradients are set before each call, the step updates the parameters in place."""

    def __init__(self, name: str):
        import torch
        import torch_optimizer

        torch.manual_seed(0)
        self.params = [torch.nn.Parameter(torch.randn(8, 4)), torch.nn.Parameter(torch.randn(4))]
        self.opt = getattr(torch_optimizer, name)(self.params, lr=1e-2)
        self.calls = 0

    def __call__(self, g):
        import torch

        for p in self.params:
            p.grad = (g.sum() + 1.0) * torch.ones_like(p)
        self.opt.step()
        return [p.detach().clone() for p in self.params]


def _optimizer(name: str):
    def build():
        import torch

        g = torch.Generator().manual_seed(1)
        return {"optimizer": name, "lr": 1e-2}, _OptStep(name), {"g": torch.randn(3, generator=g)}
    return build


def _moe():
    import torch
    from mixture_of_experts import MoE

    torch.manual_seed(0)
    cfg = dict(dim=16, num_experts=4, hidden_dim=32)
    model = MoE(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    return cfg, model, {"inputs": torch.randn(2, 8, 16, generator=g)}


# --------------------------------------------------------------------------------------------------
# torchmetrics 1.9.0 (metrics), pytorch-crf 0.7.2 (a linear-chain CRF), torchode 1.0.1 (batched ODE
# solvers) and normflows 1.7.3 (normalizing flows): a fifth round of code nobody tuned on, measured
# before anything was changed for them


class _Metrics:
    """A user's validation step: six torchmetrics metric objects reset, updated on one batch and
    computed (classification and regression), as a Lightning `validation_step` would."""

    def __init__(self):
        import torchmetrics as tm

        self.cls = {"f1": tm.F1Score(task="multiclass", num_classes=3, average="macro"),
                    "mcc": tm.MatthewsCorrCoef(task="multiclass", num_classes=3),
                    "ece": tm.CalibrationError(task="multiclass", num_classes=3)}
        self.reg = {"pearson": tm.PearsonCorrCoef(), "r2": tm.R2Score(), "mean_err": tm.MeanMetric()}

    def __call__(self, probs, labels, y_hat, y):
        out = {}
        for name, m in self.cls.items():
            m.reset()
            m.update(probs, labels)
            out[name] = m.compute()
        for name, m in self.reg.items():
            m.reset()
            if name == "mean_err":
                m.update((y_hat - y).abs())
            else:
                m.update(y_hat, y)
            out[name] = m.compute()
        return out


def _torchmetrics():
    import torch

    g = torch.Generator().manual_seed(1)
    y_hat = torch.randn(16, generator=g)
    return {"metrics": "F1Score, MatthewsCorrCoef, CalibrationError, PearsonCorrCoef, R2Score, MeanMetric"}, \
        _Metrics(), {"probs": torch.rand(16, 3, generator=g).softmax(-1),
                     "labels": torch.randint(0, 3, (16,), generator=g),
                     "y_hat": y_hat, "y": y_hat + 0.5 * torch.randn(16, generator=g)}


class _Tagger:
    """A user's sequence tagger: embedding + linear emissions into a CRF; the training loss (negative
    log likelihood) and the Viterbi paths, padded with -1 into a tensor."""

    def __init__(self):
        import torch
        from torchcrf import CRF

        torch.manual_seed(0)
        self.emb = torch.nn.Embedding(20, 8)
        self.proj = torch.nn.Linear(8, 5)
        self.crf = CRF(5, batch_first=True)

    def __call__(self, tokens, tags, mask):
        import torch

        emissions = self.proj(self.emb(tokens))
        nll = -self.crf(emissions, tags, mask, reduction="mean")
        paths = self.crf.decode(emissions, mask)
        width = tokens.shape[1]
        return nll, torch.tensor([p + [-1] * (width - len(p)) for p in paths])


def _pytorch_crf():
    import torch

    g = torch.Generator().manual_seed(1)
    mask = torch.ones(3, 6, dtype=torch.bool)
    mask[1, 4:] = False
    mask[2, 5:] = False
    return {"tags": 5, "batch_first": True}, _Tagger(), {
        "tokens": torch.randint(0, 20, (3, 6), generator=g), "tags": torch.randint(0, 5, (3, 6), generator=g),
        "mask": mask}


class _ODEBatch:
    """torchode's recipe: a solver built once (Dopri5, integral step-size controller, autodiff
    adjoint), the user's function solving a batch of initial value problems with it."""

    def __init__(self):
        import torch
        import torchode as to

        torch.manual_seed(0)
        self.func = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
        term = to.ODETerm(lambda t, y: self.func(y))
        self.solver = to.AutoDiffAdjoint(to.Dopri5(term=term),
                                         to.IntegralController(atol=1e-4, rtol=1e-3, term=term))

    def __call__(self, y0, t_eval):
        import torchode as to

        return self.solver.solve(to.InitialValueProblem(y0=y0, t_eval=t_eval)).ys


def _torchode():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"method": "dopri5", "controller": "integral", "atol": 1e-4, "rtol": 1e-3}, _ODEBatch(), \
        {"y0": torch.randn(2, 4, generator=g), "t_eval": torch.linspace(0.0, 1.0, 3).repeat(2, 1)}


class _RealNVP:
    """A Real NVP flow with ActNorm layers (normflows): the user's log-likelihood of a batch."""

    def __init__(self):
        import torch
        import normflows as nf

        torch.manual_seed(0)
        b = torch.tensor([1.0, 0.0])
        flows = []
        for i in range(2):
            s, t = nf.nets.MLP([2, 8, 2], init_zeros=True), nf.nets.MLP([2, 8, 2], init_zeros=True)
            flows += [nf.flows.MaskedAffineFlow(b if i % 2 == 0 else 1 - b, t, s), nf.flows.ActNorm(2)]
        self.flow = nf.NormalizingFlow(nf.distributions.base.DiagGaussian(2), flows).eval()

    def __call__(self, x):
        return self.flow.log_prob(x)


def _normflows():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"flow": "RealNVP (MaskedAffineFlow + ActNorm) x2", "features": 2}, _RealNVP(), \
        {"x": torch.randn(6, 2, generator=g)}


# --------------------------------------------------------------------------------------------------
# torch-geometric 2.8.1 (graph neural networks), geomloss 0.3.1 (optimal-transport losses), nnAudio
# 0.3.4 (spectrogram layers) and torchcde 0.2.5 (neural controlled differential equations): a sixth
# round of code nobody tuned on, measured before anything was changed for them


class _GNN:
    """A user's graph classifier (PyG's recipe): GCNConv, GATConv, global mean pooling over a batch of
    two small graphs, a linear head."""

    def __init__(self):
        import torch
        from torch_geometric.nn import GATConv, GCNConv

        torch.manual_seed(0)
        self.conv1 = GCNConv(4, 16)
        self.conv2 = GATConv(16, 8, heads=2)
        self.head = torch.nn.Linear(16, 3)
        for m in (self.conv1, self.conv2, self.head):
            m.eval()

    def __call__(self, x, edge_index, batch):
        import torch
        from torch_geometric.nn import global_mean_pool

        h = torch.relu(self.conv1(x, edge_index))
        h = torch.relu(self.conv2(h, edge_index))
        return self.head(global_mean_pool(h, batch))


def _pyg_graphs():
    import torch

    g = torch.Generator().manual_seed(1)
    src = torch.randint(0, 6, (14,), generator=g)
    dst = torch.randint(0, 6, (14,), generator=g)
    edge_index = torch.cat([torch.stack([src, dst]), torch.stack([src + 6, dst + 6])], dim=1)
    return {"x": torch.randn(12, 4, generator=g), "edge_index": edge_index,
            "batch": torch.tensor([0] * 6 + [1] * 6)}


def _pyg_gnn():
    return {"layers": "GCNConv(4,16), GATConv(16,8,heads=2), global_mean_pool", "graphs": 2, "nodes": 12}, \
        _GNN(), _pyg_graphs()


class _GraphPool:
    """A user's hierarchical pooling classifier: SAGEConv, TopKPooling, global max pooling."""

    def __init__(self):
        import torch
        from torch_geometric.nn import SAGEConv, TopKPooling

        torch.manual_seed(0)
        self.conv = SAGEConv(4, 16)
        self.pool = TopKPooling(16, ratio=0.5)
        self.head = torch.nn.Linear(16, 3)
        for m in (self.conv, self.pool, self.head):
            m.eval()

    def __call__(self, x, edge_index, batch):
        import torch
        from torch_geometric.nn import global_max_pool

        h = torch.relu(self.conv(x, edge_index))
        h, edge_index, _, batch, _, _ = self.pool(h, edge_index, batch=batch)
        return self.head(global_max_pool(h, batch))


def _pyg_topk():
    return {"layers": "SAGEConv(4,16), TopKPooling(ratio=0.5), global_max_pool", "graphs": 2, "nodes": 12}, \
        _GraphPool(), _pyg_graphs()


class _OTLoss:
    """A user's point-cloud loss: geomloss' SamplesLoss between two batches of point clouds."""

    def __init__(self, **cfg):
        from geomloss import SamplesLoss

        self.loss = SamplesLoss(**cfg)

    def __call__(self, x, y):
        return self.loss(x, y)


def _geomloss(loss: str):
    def build():
        import torch

        cfg = dict(loss=loss, p=2, blur=0.1, backend="tensorized")
        g = torch.Generator().manual_seed(1)
        return cfg, _OTLoss(**cfg), {"x": torch.randn(2, 12, 3, generator=g),
                                     "y": torch.randn(2, 10, 3, generator=g) + 0.5}
    return build


class _AudioFeatures:
    """A user's audio front end with nnAudio layers (kernels built at init): a log-mel spectrogram, a
    constant-Q transform and an STFT/iSTFT round trip of a batch of waveforms."""

    def __init__(self):
        import torch
        from nnAudio import features

        torch.manual_seed(0)
        self.mel = features.MelSpectrogram(sr=8000, n_fft=256, n_mels=16, hop_length=64, verbose=False).eval()
        self.cqt = features.CQT1992v2(sr=8000, hop_length=64, fmin=110.0, n_bins=24, verbose=False).eval()
        self.stft = features.STFT(n_fft=256, hop_length=64, iSTFT=True, output_format="Complex",
                                  verbose=False).eval()

    def __call__(self, wave):
        import torch

        spec = self.stft(wave, output_format="Complex")
        recon = self.stft.inverse(spec, onesided=True, length=wave.shape[-1])
        return torch.log(self.mel(wave) + 1e-6), self.cqt(wave), recon


def _nnaudio():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"mel": "sr 8000, n_fft 256, 16 mels, hop 64", "cqt": "CQT1992v2, 24 bins from 110 Hz",
            "stft": "n_fft 256, hop 64, inverse with length"}, \
        _AudioFeatures(), {"wave": torch.randn(2, 2048, generator=g)}


class _NeuralCDE:
    """torchcde's recipe: Hermite cubic coefficients of an irregular time series, a CubicSpline, a
    learned vector field integrated with cdeint (rk4, fixed step), a linear readout of the final state."""

    def __init__(self):
        import torch

        class Func(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 8 * 3))

            def forward(self, t, z):
                return self.net(z).view(z.shape[0], 8, 3)

        torch.manual_seed(0)
        self.func = Func()
        self.initial = torch.nn.Linear(3, 8)
        self.readout = torch.nn.Linear(8, 2)

    def __call__(self, series):
        import torchcde

        coeffs = torchcde.hermite_cubic_coefficients_with_backward_differences(series)
        X = torchcde.CubicSpline(coeffs)
        z0 = self.initial(X.evaluate(X.interval[0]))
        zt = torchcde.cdeint(X=X, func=self.func, z0=z0, t=X.interval, method="rk4",
                             options={"step_size": 0.5})
        return self.readout(zt[:, -1])


def _torchcde():
    import torch

    g = torch.Generator().manual_seed(1)
    t = torch.linspace(0.0, 4.0, 6)
    series = torch.cat([t.expand(2, 6).unsqueeze(-1), torch.randn(2, 6, 2, generator=g)], dim=-1)
    return {"interpolation": "hermite cubic (backward differences)", "method": "rk4", "step_size": 0.5}, \
        _NeuralCDE(), {"series": series}


# --------------------------------------------------------------------------------------------------
# MONAI 1.6.1 (medical image segmentation), stable-baselines3 2.9.2 (reinforcement learning),
# pytorch-tabnet 4.1.0 (tabular) and performer-pytorch 1.1.4 (lucidrains' Performer): a seventh
# round of code nobody tuned on, measured before anything was changed for them


class _SegStep:
    """A user's segmentation validation step with MONAI: a small 2-D UNet, DiceCE and focal losses
    (scalar alpha, per-class weights), Dice and generalized Dice on one-hot argmax predictions."""

    def __init__(self):
        import torch
        from monai.losses import DiceCELoss, FocalLoss
        from monai.networks.nets import UNet

        torch.manual_seed(0)
        self.net = UNet(spatial_dims=2, in_channels=1, out_channels=3, channels=(4, 8, 16), strides=(2, 2),
                        num_res_units=1).eval()
        self.dice_ce = DiceCELoss(to_onehot_y=True, softmax=True)
        self.focal = FocalLoss(to_onehot_y=True, use_softmax=True, alpha=0.25, weight=[1.0, 2.0, 2.0])

    def __call__(self, image, label):
        from monai.metrics import compute_dice, compute_generalized_dice
        from monai.networks.utils import one_hot

        logits = self.net(image)
        loss = self.dice_ce(logits, label) + self.focal(logits, label)
        pred = one_hot(logits.argmax(1, keepdim=True), num_classes=3)
        y = one_hot(label, num_classes=3)
        return loss, compute_dice(pred, y, include_background=False, ignore_empty=False), \
            compute_generalized_dice(pred, y)


def _monai_seg():
    import torch

    g = torch.Generator().manual_seed(1)
    # labels 0 and 1 only: class 2 is absent (the empty-class paths of the metrics run)
    return {"net": "UNet 2-D, channels (4, 8, 16), strides (2, 2), 1 residual unit",
            "losses": "DiceCE(softmax) + Focal(softmax, alpha 0.25, weight [1, 2, 2])",
            "metrics": "compute_dice(no background), compute_generalized_dice"}, \
        _SegStep(), {"image": torch.randn(2, 1, 16, 16, generator=g),
                     "label": torch.randint(0, 2, (2, 1, 16, 16), generator=g)}


class _SlidingWindow:
    """A user's inference call: MONAI's sliding_window_inference of a small UNet over a larger image
    (overlapping 16x16 windows, Gaussian blending)."""

    def __init__(self):
        import torch
        from monai.networks.nets import UNet

        torch.manual_seed(0)
        self.net = UNet(spatial_dims=2, in_channels=1, out_channels=3, channels=(4, 8, 16), strides=(2, 2),
                        num_res_units=1).eval()

    def __call__(self, image):
        from monai.inferers import sliding_window_inference

        return sliding_window_inference(image, roi_size=(16, 16), sw_batch_size=2, predictor=self.net,
                                        overlap=0.25, mode="gaussian")


def _monai_sliding():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"roi_size": (16, 16), "sw_batch_size": 2, "overlap": 0.25, "mode": "gaussian"}, \
        _SlidingWindow(), {"image": torch.randn(1, 1, 24, 24, generator=g)}


class _PPOLoss:
    """A user's PPO update (stable-baselines3's recipe): a MultiInputActorCriticPolicy on a Dict
    observation (a Box and a MultiDiscrete) with a Box action space, evaluate_actions, the clipped
    surrogate, value and entropy losses."""

    def __init__(self):
        import gymnasium as gym
        import torch
        from stable_baselines3.common.policies import MultiInputActorCriticPolicy

        torch.manual_seed(0)
        obs = gym.spaces.Dict({"state": gym.spaces.Box(-1.0, 1.0, (4,)), "mode": gym.spaces.MultiDiscrete([3, 2])})
        self.policy = MultiInputActorCriticPolicy(obs, gym.spaces.Box(-1.0, 1.0, (2,)), lr_schedule=lambda _: 3e-4,
                                                  net_arch=dict(pi=[16], vf=[16]))

    def __call__(self, state, mode, actions, old_log_prob, advantages, returns):
        import torch

        values, log_prob, entropy = self.policy.evaluate_actions({"state": state, "mode": mode}, actions)
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        ratio = torch.exp(log_prob - old_log_prob)
        policy_loss = -torch.min(advantages * ratio, advantages * torch.clamp(ratio, 0.8, 1.2)).mean()
        value_loss = torch.nn.functional.mse_loss(returns, values.flatten())
        return policy_loss + 0.5 * value_loss - 0.01 * entropy.mean()


def _sb3_ppo():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"policy": "MultiInputActorCriticPolicy, Dict(Box(4), MultiDiscrete([3, 2])) -> Box(2)",
            "net_arch": "pi [16], vf [16]", "clip_range": 0.2}, \
        _PPOLoss(), {"state": torch.randn(6, 4, generator=g),
                     "mode": torch.tensor([[0, 1], [2, 0], [1, 1], [0, 0], [2, 1], [1, 0]]),
                     "actions": torch.rand(6, 2, generator=g) * 2 - 1, "old_log_prob": -torch.rand(6, generator=g),
                     "advantages": torch.randn(6, generator=g), "returns": torch.randn(6, generator=g)}


class _SACActorLoss:
    """A user's SAC actor update (stable-baselines3's recipe) with generalized state-dependent
    exploration (gSDE): the actor's action_log_prob, the twin critics, the entropy-regularised loss."""

    def __init__(self):
        import gymnasium as gym
        import torch
        from stable_baselines3.sac.policies import SACPolicy

        torch.manual_seed(0)
        self.policy = SACPolicy(gym.spaces.Box(-1.0, 1.0, (5,)), gym.spaces.Box(-1.0, 1.0, (2,)),
                                lr_schedule=lambda _: 3e-4, net_arch=[16], use_sde=True)
        self.policy.actor.reset_noise(4)

    def __call__(self, obs):
        import torch

        actions, log_prob = self.policy.actor.action_log_prob(obs)
        q = torch.cat(self.policy.critic(obs, actions), dim=1)
        return (0.2 * log_prob - q.min(dim=1).values).mean(), actions


def _sb3_sac():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"policy": "SACPolicy, Box(5) -> Box(2), net_arch [16], use_sde=True", "ent_coef": 0.2}, \
        _SACActorLoss(), {"obs": torch.randn(4, 5, generator=g)}


def _tabnet():
    """TabNet with two categorical columns (embeddings), entmax attention masks and ghost batch
    normalisation (virtual batches of 4), in training mode."""
    import torch
    from pytorch_tabnet.tab_network import TabNet

    torch.manual_seed(0)
    cfg = dict(input_dim=6, output_dim=3, n_d=8, n_a=8, n_steps=3, cat_idxs=[0, 1], cat_dims=[5, 4],
               cat_emb_dim=[2, 2], virtual_batch_size=4, mask_type="entmax")
    model = TabNet(**cfg, group_attention_matrix=torch.eye(6)).train()
    g = torch.Generator().manual_seed(1)
    x = torch.cat([torch.randint(0, 5, (8, 1), generator=g).float(), torch.randint(0, 4, (8, 1), generator=g).float(),
                   torch.randn(8, 4, generator=g)], dim=1)
    return cfg, model, {"x": x}


def _performer():
    """PerformerLM (FAVOR+ attention plus one local-attention head, rotary positions) in training
    mode, its random features redrawn every 2 calls (a counter buffer decides), with a padding mask."""
    import torch
    from performer_pytorch import PerformerLM

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, max_seq_len=32, dim=32, depth=2, heads=2, dim_head=16, local_attn_heads=1,
               local_window_size=8, nb_features=16, feature_redraw_interval=2)
    model = PerformerLM(**cfg).train()
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(2, 16, dtype=torch.bool)
    mask[1, 12:] = False
    return cfg, model, {"x": torch.randint(0, 64, (2, 16), generator=g), "mask": mask}


# --------------------------------------------------------------------------------------------------
# pyro-ppl 1.9.2, botorch 0.18.1, bs-roformer 1.2.4 and prodigyopt 1.1.2: round 8, code nobody tuned
# on, measured before anything was changed for them


def _pyro_map():
    """A user's MAP fit in Pyro: a Student-t regression model (a vector weight with `to_event`, a
    LogNormal scale, a data plate), an AutoDelta guide (point estimates, so no sampling and the loss is
    deterministic), `Trace_ELBO().differentiable_loss(model, guide, x, y)` with autograd on."""
    import pyro
    import pyro.distributions as dist
    import torch
    from pyro.infer import Trace_ELBO
    from pyro.infer.autoguide import AutoDelta

    pyro.set_rng_seed(0)
    pyro.clear_param_store()

    def model(x, y):
        w = pyro.sample("w", dist.Normal(torch.zeros(3), torch.ones(3)).to_event(1))
        sigma = pyro.sample("sigma", dist.LogNormal(0.0, 1.0))
        with pyro.plate("data", x.shape[0]):
            pyro.sample("obs", dist.StudentT(4.0, x @ w, sigma), obs=y)

    guide = AutoDelta(model)
    elbo = Trace_ELBO()
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(8, 3, generator=g), torch.randn(8, generator=g)
    elbo.loss(model, guide, x, y)  # the guide's parameters are created on its first call

    def loss(x, y):
        return elbo.differentiable_loss(model, guide, x, y)
    return {"model": "Student-t regression, AutoDelta guide", "elbo": "Trace_ELBO"}, loss, {"x": x, "y": y}


def _botorch_acq():
    """A user's acquisition function values on a tiny GP: SingleTaskGP (float64, default priors and
    outcome standardisation, hyperparameters not fitted) on 8 points in 2-d, analytic
    LogExpectedImprovement on 4 candidates and qLogNoisyExpectedImprovement (Sobol QMC sampler,
    seeded) on 2 batches of 2."""
    import torch
    from botorch.acquisition import LogExpectedImprovement, qLogNoisyExpectedImprovement
    from botorch.models import SingleTaskGP
    from botorch.sampling import SobolQMCNormalSampler

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    X = torch.rand(8, 2, generator=g, dtype=torch.float64)
    Y = X.sin().sum(-1, keepdim=True)
    model = SingleTaskGP(X, Y).eval()
    ei = LogExpectedImprovement(model, best_f=Y.max())
    nei = qLogNoisyExpectedImprovement(model, X_baseline=X, prune_baseline=False,
                                       sampler=SobolQMCNormalSampler(torch.Size([16]), seed=0))

    def acq(cand):
        return ei(cand.unsqueeze(-2)), nei(cand.view(2, 2, 2))
    return {"model": "SingleTaskGP, 8 points, 2-d", "acq": "LogEI, qLogNEI (16 QMC samples)"}, acq, \
        {"cand": torch.rand(4, 2, generator=g, dtype=torch.float64)}


# the dropouts set to 0 (MelBandRoformer's defaults are 0.1): a training-mode call would draw random numbers
_ROFORMER = dict(dim=16, depth=1, time_transformer_depth=1, freq_transformer_depth=1, dim_head=8, heads=2,
                 stft_n_fft=64, stft_hop_length=16, stft_win_length=64, num_residual_streams=2,
                 mask_estimator_depth=1, multi_stft_resolutions_window_sizes=(32, 16), multi_stft_hop_size=8,
                 attn_dropout=0.0, ff_dropout=0.0)


def _bs_roformer():
    """BSRoformer (band-split RoPE transformer over time and frequency, hyper-connection residual
    streams, the default flash_attn=True attention path) separating a mono clip: STFT, bands, masks,
    iSTFT, eval forward."""
    import random

    import torch
    from bs_roformer import BSRoformer

    random.seed(0)  # hyper-connections pick each layer's initial residual stream with random.randrange
    torch.manual_seed(0)
    cfg = dict(_ROFORMER, freqs_per_bands=(8, 8, 8, 9))
    model = BSRoformer(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    return cfg, model, {"raw_audio": torch.randn(2, 512, generator=g)}


def _mel_roformer():
    """MelBandRoformer (overlapping mel bands from librosa's filterbank) in training mode: forward with
    a target, the L1 plus multi-resolution STFT loss."""
    import random

    import torch
    from bs_roformer import MelBandRoformer

    random.seed(0)  # hyper-connections pick each layer's initial residual stream with random.randrange
    torch.manual_seed(0)
    cfg = dict(_ROFORMER, num_bands=8, sample_rate=8000)
    model = MelBandRoformer(**cfg).train()
    g = torch.Generator().manual_seed(1)
    return cfg, model, {"raw_audio": torch.randn(2, 512, generator=g), "target": torch.randn(2, 512, generator=g)}


class _ProdigyStep:
    """`Prodigy.step()` compiled on its own (as `_OptStep`): weight decay, bias correction and the
    safeguard warmup on, the gradients set before each call."""

    def __init__(self):
        import torch
        from prodigyopt import Prodigy

        torch.manual_seed(0)
        self.params = [torch.nn.Parameter(torch.randn(8, 4)), torch.nn.Parameter(torch.randn(4))]
        self.opt = Prodigy(self.params, lr=1.0, weight_decay=0.01, safeguard_warmup=True, use_bias_correction=True)

    def __call__(self, g):
        import torch

        for p in self.params:
            p.grad = (g.sum() + 1.0) * torch.ones_like(p) + 0.1 * p.detach()
        self.opt.step()
        return [p.detach().clone() for p in self.params]


def _prodigy():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"optimizer": "Prodigy", "lr": 1.0, "weight_decay": 0.01, "safeguard_warmup": True}, _ProdigyStep(), \
        {"g": torch.randn(4, generator=g)}


# --------------------------------------------------------------------------------------------------
# torchkbnufft 1.5.2, deepxde 1.15.0, linear-attention-transformer 0.19.1 and pomegranate 1.1.2:
# round 9, code nobody tuned on, measured before anything was changed for them


def _kbnufft():
    """A user's MRI forward model and its adjoint: KbNufft (Kaiser-Bessel table interpolation of an
    oversampled FFT) of a complex 8x8 image at 20 random k-space points, then KbNufftAdjoint of
    the samples weighted by a density compensation computed once up front (scipy sparse, not compiled)."""
    import torch
    import torchkbnufft as tkbn

    torch.manual_seed(0)
    im_size = (8, 8)
    nufft, adjnufft = tkbn.KbNufft(im_size=im_size), tkbn.KbNufftAdjoint(im_size=im_size)
    g = torch.Generator().manual_seed(1)
    image = torch.randn(1, 1, *im_size, dtype=torch.complex64, generator=g)
    omega = (torch.rand(2, 20, generator=g) * 2 - 1) * torch.pi
    dcomp = tkbn.calc_density_compensation_function(ktraj=omega, im_size=im_size)

    def forward_adjoint(image, omega):
        kdata = nufft(image, omega)
        return kdata, adjnufft(kdata * dcomp, omega, norm="ortho")
    return {"im_size": im_size, "klength": 20, "numpoints": 6}, forward_adjoint, {"image": image, "omega": omega}


def _deepxde_pinn():
    """A physics-informed network for -u'' = pi^2 sin(pi x) on [-1, 1] with u = 0 at both ends: FNN
    (1-16-16-1, tanh), `dde.data.PDE` (12 uniform domain points, 2 boundary points), the residual from
    `dde.grad.hessian`; the model's training losses (`outputs_losses_train`: PDE residual and Dirichlet
    BC, as its Adam step computes them) with autograd on."""
    import os

    os.environ["DDE_BACKEND"] = "pytorch"  # deepxde reads its backend at import
    import deepxde as dde
    import numpy as np
    import torch

    torch.manual_seed(0)
    np.random.seed(0)

    def pde(x, y):
        return -dde.grad.hessian(y, x) - torch.pi ** 2 * torch.sin(torch.pi * x)

    geom = dde.geometry.Interval(-1, 1)
    bc = dde.icbc.DirichletBC(geom, lambda x: 0 * x[:, :1], lambda x, on_boundary: on_boundary)
    data = dde.data.PDE(geom, pde, bc, num_domain=12, num_boundary=2, train_distribution="uniform")
    model = dde.Model(data, dde.nn.FNN([1, 16, 16, 1], "tanh", "Glorot uniform"))
    model.compile("adam", lr=1e-3)

    def losses(x):
        return model.outputs_losses_train(x, None, None)
    return {"pde": "Poisson 1-d", "net": [1, 16, 16, 1], "points": 14}, losses, \
        {"x": torch.as_tensor(data.train_x)}


def _linear_attention_train():
    """LinearAttentionTransformerLM (linear attention plus one local-attention head, reversible
    layers that record and replay the RNG state) in a training step with a padding mask: forward,
    cross entropy, backward through the reversible blocks, SGD."""
    import torch
    from linear_attention_transformer import LinearAttentionTransformerLM

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, dim=32, heads=2, depth=2, max_seq_len=32, n_local_attn_heads=1,
               local_attn_window_size=8, reversible=True)
    model = LinearAttentionTransformerLM(**cfg).train()

    def loss_fn(m, x, mask):
        logits = m(x[:, :-1], input_mask=mask)
        return torch.nn.functional.cross_entropy(logits.transpose(1, 2), x[:, 1:])

    g = torch.Generator().manual_seed(1)
    mask = torch.ones(2, 16, dtype=torch.bool)
    mask[1, 12:] = False
    return cfg, _TrainStep(model, loss_fn), {"x": torch.randint(0, 64, (2, 17), generator=g), "mask": mask}


def _pomegranate_infer():
    """A user's inference with fixed pomegranate models: a 2-state DenseHMM (diagonal Normal emissions,
    start and end probabilities) giving the forward log probability and the posterior state
    probabilities of 2 sequences, and a 2-component mixture of Exponentials giving log probabilities
    and responsibilities."""
    import torch
    from pomegranate.distributions import Exponential, Normal
    from pomegranate.gmm import GeneralMixtureModel
    from pomegranate.hmm import DenseHMM

    torch.manual_seed(0)
    d1 = Normal([0.0, 0.0], [1.0, 2.0], covariance_type="diag")
    d2 = Normal([1.0, -1.0], [0.5, 1.0], covariance_type="diag")
    hmm = DenseHMM([d1, d2], edges=[[0.8, 0.2], [0.3, 0.7]], starts=[0.6, 0.4], ends=[0.1, 0.1])
    gmm = GeneralMixtureModel([Exponential([1.0, 2.0]), Exponential([0.5, 0.3])], priors=[0.4, 0.6])

    def infer(X, Y):
        return hmm.log_probability(X), hmm.predict_proba(X), gmm.log_probability(Y), gmm.predict_proba(Y)
    g = torch.Generator().manual_seed(1)
    return {"hmm": "DenseHMM, 2 diagonal Normals", "gmm": "2 Exponentials"}, infer, \
        {"X": torch.randn(2, 6, 2, generator=g), "Y": torch.rand(5, 2, generator=g) + 0.1}


def _pomegranate_fit():
    """A user's fit of a fresh pomegranate DenseHMM on each call (so every call starts from the same
    model): two diagonal Normal emissions from tensors, `fit` with Baum-Welch for at most 3 iterations
    (its loop times each iteration and stops on a small improvement), the learned transition matrix and
    emission parameters, and the fitted model's log probability of the data."""
    import torch
    from pomegranate.distributions import Normal
    from pomegranate.hmm import DenseHMM

    torch.manual_seed(0)

    def fit(X):
        d1 = Normal(torch.tensor([0.0, 0.0]), torch.tensor([1.0, 1.0]), covariance_type="diag")
        d2 = Normal(torch.tensor([2.0, 2.0]), torch.tensor([1.0, 1.0]), covariance_type="diag")
        hmm = DenseHMM([d1, d2], edges=torch.tensor([[0.9, 0.1], [0.1, 0.9]]), starts=torch.tensor([0.5, 0.5]),
                       max_iter=3, tol=1e-9)
        hmm.fit(X)
        return hmm.edges, d1.means, d1.covs, d2.means, d2.covs, hmm.log_probability(X)
    g = torch.Generator().manual_seed(1)
    X = torch.cat([torch.randn(3, 8, 2, generator=g), torch.randn(3, 8, 2, generator=g) + 2.0], 1)
    return {"hmm": "DenseHMM, 2 diagonal Normals", "max_iter": 3, "X": [3, 16, 2]}, fit, {"X": X}


# --------------------------------------------------------------------------------------------------
# opacus 1.6.0, POT 0.9.7.post1, ema-pytorch 0.8.3 and auraloss 0.4.0: round 10, code nobody tuned on,
# measured before anything was changed for them


def _opacus_net():
    import torch

    class Transpose(torch.nn.Module):  # (batch, length, channels) -> (batch, channels, length)
        def forward(self, x):
            return x.transpose(1, 2)

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Embedding(32, 8), Transpose(), torch.nn.Conv1d(8, 8, 3, padding=1),
                               torch.nn.GroupNorm(2, 8), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(8 * 6, 3))


def _opacus_forward():
    """opacus' GradSampleModule (hooks mode) around a small classifier (Embedding, Conv1d, GroupNorm,
    Linear) in training mode: the forward of a DP-SGD step, whose forward hooks record each layer's
    activations for the per-sample gradients. (Compiling the whole step, backward included, stops
    Dynamo with an error: it traces the backward hook's `del p._current_grad_sample` on a fake
    Parameter.)"""
    import torch
    from opacus import GradSampleModule

    model = GradSampleModule(_opacus_net()).train()
    g = torch.Generator().manual_seed(1)
    return {"model": "Embedding-Conv1d-GroupNorm-Linear", "grad_sample_mode": "hooks"}, model, \
        {"input": torch.randint(0, 32, (4, 6), generator=g)}


class _DPOptStep:
    """`DPOptimizer.step()` (SGD inside) compiled on its own, as `_OptStep`: per-sample gradients of a
    small classifier computed once by a GradSampleModule forward and backward, set again after
    `zero_grad` on each call; the step clips each sample's gradient to max_grad_norm 1.0, adds
    Gaussian noise (multiplier 0.5, the global RNG), averages over the expected batch size and
    updates the parameters."""

    def __init__(self):
        import torch
        from opacus import GradSampleModule
        from opacus.optimizers import DPOptimizer

        self.model = GradSampleModule(_opacus_net()).train()
        self.opt = DPOptimizer(torch.optim.SGD(self.model.parameters(), lr=0.1), noise_multiplier=0.5,
                               max_grad_norm=1.0, expected_batch_size=4)
        g = torch.Generator().manual_seed(2)
        x, y = torch.randint(0, 32, (4, 6), generator=g), torch.randint(0, 3, (4,), generator=g)
        with torch.enable_grad():
            torch.nn.functional.cross_entropy(self.model(x), y).backward()
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.grad_samples = [p.grad_sample.detach().clone() for p in self.params]

    def __call__(self, scale):
        self.opt.zero_grad(set_to_none=True)  # clears p.grad, p.grad_sample and p.summed_grad
        for p, gs in zip(self.params, self.grad_samples):
            p.grad_sample = gs * scale
        self.opt.step()
        return [p.detach().clone() for p in self.params]


def _opacus_dp_step():
    import torch

    return {"optimizer": "DPOptimizer(SGD lr 0.1)", "noise_multiplier": 0.5, "max_grad_norm": 1.0, "batch": 4}, \
        _DPOptStep(), {"scale": torch.tensor(3.0)}


def _pot_sinkhorn():
    """A user's entropic optimal-transport loss between two point clouds with POT's torch backend: the
    squared Euclidean cost `ot.dist`, the Sinkhorn-Knopp plan (`ot.sinkhorn`, reg 0.5, at most 30
    iterations, its marginal error checked every 10th) and the log-domain Sinkhorn loss
    (`ot.sinkhorn2(method="sinkhorn_log")`) with uniform weights."""
    import ot
    import torch

    def ot_loss(x, y):
        a, b = torch.full((x.shape[0],), 1.0 / x.shape[0]), torch.full((y.shape[0],), 1.0 / y.shape[0])
        M = ot.dist(x, y)
        plan = ot.sinkhorn(a, b, M, reg=0.5, numItermax=30, stopThr=1e-6)
        return plan, (plan * M).sum(), ot.sinkhorn2(a, b, M, 0.5, method="sinkhorn_log", numItermax=30,
                                                     stopThr=1e-6)
    g = torch.Generator().manual_seed(1)
    return {"points": [6, 5], "dim": 2, "reg": 0.5, "numItermax": 30}, ot_loss, \
        {"x": torch.randn(6, 2, generator=g), "y": torch.randn(5, 2, generator=g) + 1.0}


def _pot_sliced():
    """A user's sliced Wasserstein distances with POT's torch backend: `ot.sliced_wasserstein_distance`
    (20 random projections drawn from a fixed seed) and `ot.max_sliced_wasserstein_distance`
    between two weighted point clouds in 3-d."""
    import ot
    import torch

    def sliced(x, y, b):
        return (ot.sliced_wasserstein_distance(x, y, b=b, n_projections=20, seed=0),
                ot.max_sliced_wasserstein_distance(x, y, b=b, n_projections=20, seed=0))
    g = torch.Generator().manual_seed(1)
    return {"points": [8, 7], "dim": 3, "n_projections": 20}, sliced, \
        {"x": torch.randn(8, 3, generator=g), "y": torch.randn(7, 3, generator=g) * 0.5,
         "b": torch.softmax(torch.randn(7, generator=g), 0)}


class _EMAStep(_TrainStep):
    """A user's training step with an exponential moving average of the weights (ema-pytorch's EMA,
    warmup decay schedule, updated every step after the first): forward, MSE, backward, SGD, then
    `ema.update()`, and the EMA model's prediction on the batch."""

    def __init__(self):
        import torch
        from ema_pytorch import EMA

        torch.manual_seed(0)
        super().__init__(torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.LayerNorm(16), torch.nn.GELU(),
                                             torch.nn.Linear(16, 2)).train(), _mse)
        self.ema = EMA(self.model, beta=0.99, update_after_step=1, update_every=1, power=3 / 4)

    def __call__(self, x, y):
        loss = self.step(x=x, y=y)
        self.ema.update()
        return {"loss": loss.detach(), "ema_pred": self.ema(x).detach(),
                **{n: p.detach().clone() for n, p in self.ema.ema_model.named_parameters()}}


def _ema_step():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"model": "MLP 4-16-2", "ema": "beta 0.99, update_after_step 1, update_every 1, power 3/4"}, \
        _EMAStep(), {"x": torch.randn(8, 4, generator=g), "y": torch.randn(8, 2, generator=g)}


class _AudioLosses:
    """A user's audio training loss with auraloss on a stereo batch: multi-resolution STFT (3
    resolutions), mel-scale STFT (librosa filterbank, 16 mels), sum-and-difference STFT, SI-SDR,
    ESR with pre-emphasis and DC loss, weighted and summed."""

    def __init__(self):
        import auraloss

        self.mrstft = auraloss.freq.MultiResolutionSTFTLoss(fft_sizes=[64, 128, 32], hop_sizes=[16, 32, 8],
                                                            win_lengths=[64, 128, 32])
        self.mel = auraloss.freq.MelSTFTLoss(8000, fft_size=128, hop_size=32, win_length=128, n_mels=16)
        self.sumdiff = auraloss.freq.SumAndDifferenceSTFTLoss(fft_sizes=[64, 32], hop_sizes=[16, 8],
                                                              win_lengths=[64, 32])
        self.sisdr, self.esr, self.dc = auraloss.time.SISDRLoss(), auraloss.time.ESRLoss(), auraloss.time.DCLoss()

    def __call__(self, pred, target):
        losses = {"mrstft": self.mrstft(pred, target), "mel": self.mel(pred, target),
                  "sumdiff": self.sumdiff(pred, target), "sisdr": self.sisdr(pred, target),
                  "esr": self.esr(pred, target), "dc": self.dc(pred, target)}
        losses["total"] = losses["mrstft"] + 0.5 * losses["mel"] + 0.5 * losses["sumdiff"] + 0.01 * losses["sisdr"] \
            + losses["esr"] + losses["dc"]
        return losses


def _auraloss():
    import torch

    g = torch.Generator().manual_seed(1)
    target = torch.randn(2, 2, 512, generator=g)
    return {"losses": "MRSTFT (3), MelSTFT (16 mels), SumAndDifference STFT, SI-SDR, ESR, DC", "batch": [2, 2, 512]}, \
        _AudioLosses(), {"pred": target + 0.3 * torch.randn(2, 2, 512, generator=g), "target": target}


# --------------------------------------------------------------------------------------------------
# pytorch-optimizer 4.1.0, fast-pytorch-kmeans 0.2.2, pytorch-msssim 1.0.0 and julius 0.2.8: round 11,
# code nobody tuned on, measured before anything was changed for them


class _PyOptStep:
    """Three pytorch-optimizer optimizers stepped in one compiled call, each on its own two
    parameters (a matrix and a bias), as a user's step with one optimizer per parameter group would:
    AdamP (the projection that drops the radial part of the update when the gradient is nearly
    orthogonal to a weight), Adan with global gradient-norm clipping (max_grad_norm 1.0) and
    DAdaptAdam (the D-adaptation step size); the gradients are set before each call."""

    def __init__(self):
        import torch
        from pytorch_optimizer import AdamP, Adan, DAdaptAdam

        torch.manual_seed(0)
        self.params = [[torch.nn.Parameter(torch.randn(8, 4)), torch.nn.Parameter(torch.randn(4))] for _ in range(3)]
        self.opts = [AdamP(self.params[0], lr=1e-2, weight_decay=1e-2), Adan(self.params[1], lr=1e-2, max_grad_norm=1.0),
                     DAdaptAdam(self.params[2], lr=1.0)]

    def __call__(self, g):
        import torch

        for group in self.params:
            for p in group:
                p.grad = (g.sum() + 1.0) * torch.ones_like(p) + 0.1 * p.detach()
        for opt in self.opts:
            opt.step()
        return [p.detach().clone() for group in self.params for p in group]


def _pyopt_step():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"optimizers": "AdamP(lr 1e-2, wd 1e-2), Adan(lr 1e-2, max_grad_norm 1.0), DAdaptAdam(lr 1.0)"}, \
        _PyOptStep(), {"g": torch.randn(3, generator=g)}


class _PyOptLosses:
    """A user's segmentation and classification loss with pytorch-optimizer's losses: multiclass
    Dice (from logits), binary Lovasz hinge (per image), focal Tversky, bi-tempered logistic loss
    (t1 0.8, t2 1.2) and LDAM (class-count margins), summed."""

    def __init__(self):
        from pytorch_optimizer.loss import BiTemperedLogisticLoss, DiceLoss, FocalTverskyLoss, LDAMLoss, LovaszHingeLoss

        self.dice = DiceLoss(mode="multiclass")
        self.lovasz = LovaszHingeLoss(per_image=True)
        self.tversky = FocalTverskyLoss(gamma=0.75)
        self.bitempered = BiTemperedLogisticLoss(t1=0.8, t2=1.2)
        self.ldam = LDAMLoss(num_class_list=[10, 5, 2])

    def __call__(self, seg_logits, seg_target, mask_logits, mask, cls_logits, labels):
        losses = {"dice": self.dice(seg_logits, seg_target), "lovasz": self.lovasz(mask_logits, mask),
                  "tversky": self.tversky(mask_logits.sigmoid(), mask.float()),
                  "bitempered": self.bitempered(cls_logits, labels), "ldam": self.ldam(cls_logits, labels)}
        losses["total"] = sum(losses.values())
        return losses


def _pyopt_losses():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"losses": "Dice (3 classes), Lovasz hinge, focal Tversky, bi-tempered, LDAM", "seg": [2, 3, 6, 6]}, \
        _PyOptLosses(), {"seg_logits": torch.randn(2, 3, 6, 6, generator=g),
                         "seg_target": torch.randint(0, 3, (2, 6, 6), generator=g),
                         "mask_logits": torch.randn(2, 1, 6, 6, generator=g),
                         "mask": torch.randint(0, 2, (2, 1, 6, 6), generator=g),
                         "cls_logits": torch.randn(4, 3, generator=g), "labels": torch.tensor([0, 1, 2, 0])}


def _fast_kmeans():
    """A user's clustering call: fast-pytorch-kmeans' KMeans (3 clusters, at most 20 iterations,
    tolerance 1e-4, the convergence test `error <= tol` each iteration, not verbose: its prints would
    carry wall-clock times) fitted on three blobs with `fit_predict` from initial centroids the user
    picks (one point of each blob, so the call is deterministic), then the centroids."""
    import torch
    from fast_pytorch_kmeans import KMeans

    def cluster(X):
        km = KMeans(n_clusters=3, max_iter=20, tol=1e-4)
        labels = km.fit_predict(X, centroids=X[[0, 10, 20]].clone())
        return labels, km.centroids
    g = torch.Generator().manual_seed(1)
    X = torch.cat([torch.randn(10, 2, generator=g) + c for c in (torch.tensor([0.0, 0.0]), torch.tensor([4.0, 0.0]),
                                                               torch.tensor([0.0, 4.0]))])
    return {"n_clusters": 3, "init": "given (X[[0, 10, 20]])", "max_iter": 20, "X": [30, 2]}, cluster, {"X": X}


def _msssim_loss():
    """A user's image reconstruction loss with pytorch-msssim: 1 - MS-SSIM (window 3, five scales,
    data range 1) on 40x40 images plus 1 - SSIM (the module, default 11-wide window) on 8x40 crops,
    whose height is under the window so the Gaussian smoothing of that dimension is skipped with a
    warning, plus L1."""
    import torch
    from pytorch_msssim import SSIM, ms_ssim

    ssim_module = SSIM(data_range=1.0, channel=3)

    def loss(pred, target):
        ms = ms_ssim(pred, target, data_range=1.0, win_size=3)
        crop = ssim_module(pred[..., :8, :], target[..., :8, :])
        return {"ms_ssim": ms, "ssim_crop": crop,
                "total": (1 - ms) + 0.5 * (1 - crop) + torch.nn.functional.l1_loss(pred, target)}
    g = torch.Generator().manual_seed(1)
    target = torch.rand(2, 3, 40, 40, generator=g)
    return {"ms_ssim": "win 3, 5 scales", "ssim": "win 11 on 8x40 crops", "images": [2, 3, 40, 40]}, loss, \
        {"pred": (target + 0.1 * torch.randn(2, 3, 40, 40, generator=g)).clamp(0, 1), "target": target}


def _julius_frontend():
    """A user's audio front end with julius: resample 16 kHz -> 12 kHz (`resample_frac`), split into
    4 mel-spaced bands (`split_bands`, which builds its filters on each call), a high-pass and a
    band-pass filter with FFT convolution, and an FFT convolution with a random 33-tap kernel
    (`fft_conv1d`)."""
    import julius
    import torch

    def frontend(wav, kernel):
        low = julius.resample_frac(wav, 16000, 12000)
        bands = julius.split_bands(low, 12000, n_bands=4)
        return {"resampled": low, "bands": bands, "highpass": julius.highpass_filter(wav, 0.05, fft=True),
                "bandpass": julius.bandpass_filter(wav, 0.05, 0.2, fft=True),
                "conv": julius.fft_conv1d(wav, kernel, padding=16)}
    g = torch.Generator().manual_seed(1)
    return {"sr": "16000 -> 12000", "n_bands": 4, "wav": [2, 1, 800]}, frontend, \
        {"wav": torch.randn(2, 1, 800, generator=g), "kernel": torch.randn(4, 1, 33, generator=g) / 33}


# --------------------------------------------------------------------------------------------------
# pytorch-tcn 1.2.3, tab-transformer-pytorch 0.6.1, torch-ema 0.3 and local-attention 1.11.2: round 12,
# code nobody tuned on, measured before anything was changed for them


def _tcn_forward():
    """pytorch-tcn's TCN (3 input channels, three 8-channel weight-normed blocks, kernel 3, causal,
    skip connections, a 4-dim conditioning embedding added in each block, output projection to 2
    channels), eval forward on a batch of two 32-step sequences."""
    import torch
    from pytorch_tcn import TCN

    torch.manual_seed(0)
    cfg = dict(num_inputs=3, num_channels=[8, 8, 8], kernel_size=3, causal=True, use_skip_connections=True,
               embedding_shapes=[(4,)], embedding_mode="add", output_projection=2, dropout=0.0)
    model = TCN(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    return cfg, model, {"x": torch.randn(2, 3, 32, generator=g), "embeddings": [torch.randn(2, 4, generator=g)]}


def _tcn_streaming():
    """A user's streaming inference with pytorch-tcn: a causal TCN (two 8-channel blocks, kernel 3,
    batch norm) fed three 8-step chunks of one sequence with `inference=True`, so each padding layer
    prepends its buffer of the previous chunk's tail and keeps the new tail; the buffers are reset
    first, so each call starts from silence."""
    import torch
    from pytorch_tcn import TCN

    torch.manual_seed(0)
    cfg = dict(num_inputs=2, num_channels=[8, 8], kernel_size=3, causal=True, use_norm="batch_norm", dropout=0.0)
    model = TCN(**cfg).eval()

    def stream(x):
        model.reset_buffers()
        return torch.cat([model.inference(chunk) for chunk in x.split(8, dim=-1)], dim=-1)
    g = torch.Generator().manual_seed(1)
    return {**cfg, "chunks": "3 x 8 steps"}, stream, {"x": torch.randn(1, 2, 24, generator=g)}


def _tab_transformer():
    """TabTransformer (3 categorical columns of 4, 3 and 5 values, 2 continuous, dim 16, depth 2,
    4 residual streams, a ReLU MLP head: its default `mlp_act=None` reaches the MLP as `None`), eval
    forward on 4 rows, one of which marks a category missing with the special token -1 (the
    `is_special_token.any()` path)."""
    import random

    import torch
    from tab_transformer_pytorch import TabTransformer

    random.seed(0)  # hyper-connections picks each layer's initial residual stream with random.randrange
    torch.manual_seed(0)
    cfg = dict(categories=(4, 3, 5), num_continuous=2, dim=16, depth=2, heads=2, dim_head=8, dim_out=1)
    model = TabTransformer(**cfg, mlp_act=torch.nn.ReLU()).eval()
    g = torch.Generator().manual_seed(1)
    x_categ = torch.stack([torch.randint(0, c, (4,), generator=g) for c in (4, 3, 5)], dim=-1)
    x_categ[1, 2] = -1
    return {**cfg, "mlp_act": "ReLU"}, model, {"x_categ": x_categ, "x_cont": torch.randn(4, 2, generator=g)}


def _ft_transformer_train():
    """FTTransformer (3 categorical columns, 2 numerical, dim 16, depth 1): a training step (binary
    cross-entropy on the logit, backward, SGD)."""
    import random

    import torch
    from tab_transformer_pytorch import FTTransformer

    random.seed(0)  # hyper-connections picks each layer's initial residual stream with random.randrange
    torch.manual_seed(0)
    cfg = dict(categories=(4, 3, 5), num_continuous=2, dim=16, depth=1, heads=2, dim_head=8, dim_out=1)
    model = FTTransformer(**cfg)

    def loss_fn(m, x_categ, x_numer, y):
        return torch.nn.functional.binary_cross_entropy_with_logits(m(x_categ, x_numer).squeeze(-1), y)
    g = torch.Generator().manual_seed(1)
    x_categ = torch.stack([torch.randint(0, c, (4,), generator=g) for c in (4, 3, 5)], dim=-1)
    return cfg, _TrainStep(model, loss_fn), {"x_categ": x_categ, "x_numer": torch.randn(4, 2, generator=g),
                                             "y": torch.tensor([0.0, 1.0, 1.0, 0.0])}


class _TorchEMAStep(_TrainStep):
    """A user's training step with torch-ema: MSE on a 4-16-2 MLP, backward, SGD, then
    `ExponentialMovingAverage.update()` (decay 0.99, with the num_updates warm-up), and a validation
    prediction under `ema.average_parameters()` (store, copy the shadow weights in, restore)."""

    def __init__(self):
        import torch
        from torch_ema import ExponentialMovingAverage

        torch.manual_seed(0)
        super().__init__(torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2)), _mse)
        self.ema = ExponentialMovingAverage(self.model.parameters(), decay=0.99)

    def __call__(self, x, y):
        loss = self.step(x=x, y=y)
        self.ema.update()
        with self.ema.average_parameters():
            ema_pred = self.model(x).detach()
        return {"loss": loss.detach(), "ema_pred": ema_pred, **{f"shadow{i}": s.clone()
                                                                for i, s in enumerate(self.ema.shadow_params)}}


def _torch_ema_step():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"model": "MLP 4-16-2", "ema": "decay 0.99, use_num_updates"}, _TorchEMAStep(), \
        {"x": torch.randn(8, 4, generator=g), "y": torch.randn(8, 2, generator=g)}


def _local_attn_generate():
    """local-attention's LocalTransformer (64 tokens, dim 32, depth 2, window 8, dynamic position
    bias, 2 residual streams): greedy `generate` (temperature 0, KV cache) of 6 tokens from a
    4-token prompt."""
    import random

    import torch
    from local_attention import LocalTransformer

    random.seed(0)  # hyper-connections picks each layer's initial residual stream with random.randrange
    torch.manual_seed(0)
    cfg = dict(num_tokens=64, max_seq_len=32, dim=32, depth=2, heads=2, dim_head=16, local_attn_window_size=8,
               use_dynamic_pos_bias=True, num_residual_streams=2)
    model = LocalTransformer(**cfg).eval()

    def generate(prime):
        return model.generate(prime, 6, temperature=0.0)
    g = torch.Generator().manual_seed(1)
    return {**cfg, "generate": "6 tokens, temperature 0, kv cache"}, generate, \
        {"prime": torch.randint(0, 64, (1, 4), generator=g)}


# --------------------------------------------------------------------------------------------------
# pytorch-minimize 0.1.0, geoopt 0.5.1, cooper-optim 1.0.1 and nystrom-attention 0.0.14: round 13,
# code nobody tuned on, measured before anything was changed for them


def _torchmin_bfgs():
    """A user's solver call with pytorch-minimize: `torchmin.minimize` with BFGS (the default
    strong-Wolfe line search) on the 4-dimensional Rosenbrock function from a fixed start, at most
    20 iterations; returns the solution, the objective, the gradient and the iteration count."""
    import torch
    from torchmin import minimize

    def rosen(x):
        return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()

    def solve(x0):
        res = minimize(rosen, x0, method="bfgs", max_iter=20)
        return {"x": res.x, "fun": res.fun, "grad": res.grad, "nit": torch.tensor(res.nit)}
    return {"fun": "rosenbrock, 4 dims", "method": "bfgs", "max_iter": 20}, solve, \
        {"x0": torch.tensor([-1.2, 1.0, -0.5, 0.8])}


def _torchmin_lbfgs_newton():
    """A user's least-squares fit with pytorch-minimize: L-BFGS (history 5, strong-Wolfe line
    search) then Newton-CG from its solution, on a ridge-regularized logistic regression of 32
    points with 3 features, at most 10 iterations each."""
    import torch
    from torchmin import minimize

    def solve(X, y, w0):
        def loss(w):
            return torch.nn.functional.binary_cross_entropy_with_logits(X @ w, y) + 1e-2 * w.square().sum()
        r1 = minimize(loss, w0, method="l-bfgs", max_iter=10, options={"history_size": 5, "line_search": "strong-wolfe"})
        r2 = minimize(loss, r1.x, method="newton-cg", max_iter=10)
        return {"lbfgs_x": r1.x, "lbfgs_fun": r1.fun, "newton_x": r2.x, "newton_fun": r2.fun}
    g = torch.Generator().manual_seed(1)
    X = torch.randn(32, 3, generator=g)
    return {"fun": "logistic regression, 32 x 3, ridge 1e-2", "methods": "l-bfgs (strong-wolfe), newton-cg"}, \
        solve, {"X": X, "y": (X[:, 0] - X[:, 1] > 0).float(), "w0": torch.zeros(3)}


class _GeooptRAdamStep:
    """A user's Riemannian training step with geoopt: a 6x3 weight on the Stiefel manifold
    (orthonormal columns) and a 4-dim point on the Poincare ball (curvature -1) as
    ManifoldParameters, a loss through the ball's distance to a target and the Stiefel weight,
    backward, `RiemannianAdam.step()` (Riemannian gradient, retraction, transport of the moments),
    then `RiemannianSGD.step()` (momentum 0.9, nesterov) on a sphere parameter."""

    def __init__(self):
        import torch
        import geoopt

        torch.manual_seed(0)
        self.ball = geoopt.PoincareBall(c=1.0)
        stiefel = geoopt.Stiefel()
        self.w = geoopt.ManifoldParameter(stiefel.random(6, 3), manifold=stiefel)
        self.p = geoopt.ManifoldParameter(self.ball.expmap0(0.3 * torch.randn(4)), manifold=self.ball)
        sphere = geoopt.Sphere()
        self.s = geoopt.ManifoldParameter(sphere.projx(torch.randn(5)), manifold=sphere)
        self.radam = geoopt.optim.RiemannianAdam([self.w, self.p], lr=1e-2)
        self.rsgd = geoopt.optim.RiemannianSGD([self.s], lr=1e-2, momentum=0.9, nesterov=True)

    def __call__(self, x, target, v):
        self.radam.zero_grad(set_to_none=True)
        self.rsgd.zero_grad(set_to_none=True)
        loss = (x @ self.w).square().mean() + self.ball.dist(self.p, target) ** 2 - (self.s @ v) ** 2
        loss.backward()
        self.radam.step()
        self.rsgd.step()
        return {"loss": loss.detach(), "w": self.w.detach().clone(), "p": self.p.detach().clone(),
                "s": self.s.detach().clone()}


def _geoopt_radam_step():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"params": "Stiefel 6x3, PoincareBall 4, Sphere 5", "optimizers": "RiemannianAdam, RiemannianSGD"}, \
        _GeooptRAdamStep(), {"x": torch.randn(8, 6, generator=g), "target": 0.2 * torch.randn(4, generator=g),
                             "v": torch.randn(5, generator=g)}


def _geoopt_hyperbolic():
    """A user's hyperbolic embedding head with geoopt: points mapped onto a learnable-curvature
    Poincare ball (`expmap0`), a Mobius matrix-vector product and Mobius addition of a bias, the
    distance matrix to 3 prototypes, a geodesic midpoint (`weighted_midpoint`) and the logarithmic
    map back to the tangent space at the origin."""
    import torch
    import geoopt

    torch.manual_seed(0)
    ball = geoopt.PoincareBallExact(c=0.5, learnable=True)
    weight = torch.randn(4, 4) / 2
    bias = ball.expmap0(0.1 * torch.randn(4))
    protos = ball.expmap0(0.5 * torch.randn(3, 4))

    def head(u):
        x = ball.expmap0(u)
        h = ball.mobius_add(ball.mobius_matvec(weight, x), bias)
        return {"dist": ball.dist(h.unsqueeze(-2), protos), "mid": ball.weighted_midpoint(h, reducedim=[0]),
                "log": ball.logmap0(h)}
    g = torch.Generator().manual_seed(1)
    return {"ball": "PoincareBallExact c=0.5 learnable", "dim": 4, "prototypes": 3}, head, \
        {"u": 0.5 * torch.randn(6, 4, generator=g)}


class _CooperStep:
    """A user's constrained training step with cooper: a 3-input logistic regression whose mean
    prediction must stay below 0.4 (an inequality constraint with a dense Lagrange multiplier),
    `SimultaneousOptimizer.roll()` (Lagrangian, primal SGD descent and dual SGD ascent, the
    multiplier projected onto the non-negative orthant)."""

    def __init__(self):
        import torch
        import cooper

        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)

        class RateCMP(cooper.ConstrainedMinimizationProblem):
            def __init__(self):
                super().__init__()
                self.rate = cooper.Constraint(constraint_type=cooper.ConstraintType.INEQUALITY,
                                              formulation_type=cooper.formulations.Lagrangian,
                                              multiplier=cooper.multipliers.DenseMultiplier(num_constraints=1))

            def compute_cmp_state(self, model, x, y):
                logits = model(x).squeeze(-1)
                loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y)
                violation = (torch.sigmoid(logits).mean() - 0.4).reshape(1)
                return cooper.CMPState(loss=loss, observed_constraints={self.rate: cooper.ConstraintState(violation=violation)})

        self.cmp = RateCMP()
        self.opt = cooper.optim.SimultaneousOptimizer(
            cmp=self.cmp, primal_optimizers=torch.optim.SGD(self.model.parameters(), lr=1e-1),
            dual_optimizers=torch.optim.SGD(self.cmp.dual_parameters(), lr=1e-1, maximize=True))

    def __call__(self, x, y):
        roll = self.opt.roll(compute_cmp_state_kwargs={"model": self.model, "x": x, "y": y})
        return {"loss": roll.cmp_state.loss.detach(), "lagrangian": roll.primal_lagrangian_store.lagrangian.detach(),
                "multiplier": self.cmp.rate.multiplier.weight.detach().clone(),
                **{n: p.detach().clone() for n, p in self.model.named_parameters()}}


def _cooper_step():
    import torch

    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 3, generator=g)
    return {"model": "Linear(3, 1)", "constraint": "mean prediction <= 0.4", "optimizer": "SimultaneousOptimizer"}, \
        _CooperStep(), {"x": x, "y": (x[:, 0] > 0).float()}


def _nystromformer():
    """Nystromformer (dim 32, depth 2, 2 heads, 8 landmarks, 3 pseudo-inverse iterations, residual
    depthwise conv), eval forward on 2 sequences of 30 tokens (not a multiple of the landmarks: the
    padding path) with a padding mask whose second row ends 6 tokens early."""
    import torch
    from nystrom_attention import Nystromformer

    torch.manual_seed(0)
    cfg = dict(dim=32, depth=2, dim_head=16, heads=2, num_landmarks=8, pinv_iterations=3)
    model = Nystromformer(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(2, 30, dtype=torch.bool)
    mask[1, 24:] = False
    return cfg, model, {"x": torch.randn(2, 30, 32, generator=g), "mask": mask}


# --------------------------------------------------------------------------------------------------
# siren-pytorch 0.1.7, linformer 0.2.3, native-sparse-attention-pytorch 0.2.3 and
# ring-attention-pytorch 0.5.20: round 14, code nobody tuned on, measured before anything was changed
# for them


def _siren_train():
    """A user's implicit image fit with siren-pytorch: SirenWrapper around a SirenNet (2 -> 32 -> 3,
    3 layers, sine activations, w0_initial 30) over an 8x8 coordinate grid, modulated by a latent
    (Modulator); a training step (the wrapper's MSE against an image, backward, SGD)."""
    import torch
    from siren_pytorch import SirenNet, SirenWrapper

    torch.manual_seed(0)
    cfg = dict(dim_in=2, dim_hidden=32, dim_out=3, num_layers=3, w0_initial=30.0, image_width=8, image_height=8,
               latent_dim=8)
    net = SirenNet(dim_in=2, dim_hidden=32, dim_out=3, num_layers=3, w0_initial=30.0)
    model = SirenWrapper(net, image_width=8, image_height=8, latent_dim=8)

    def loss_fn(m, img, latent):
        return m(img, latent=latent)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"img": torch.randn(1, 3, 8, 8, generator=g),
                                             "latent": torch.randn(8, generator=g)}


def _linformer_lm():
    """LinformerLM (64 tokens, dim 32, seq_len 32, depth 2, k 8 projected keys, 2 heads, shared
    key/value projection), eval forward on 2 sequences of 24 tokens (shorter than seq_len: the
    projections are sliced)."""
    import torch
    from linformer import LinformerLM

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, dim=32, seq_len=32, depth=2, k=8, heads=2, share_kv=True)
    model = LinformerLM(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    return cfg, model, {"x": torch.randint(0, 64, (2, 24), generator=g)}


def _linformer_reversible_train():
    """Linformer (dim 32, seq_len 16, depth 2, k 8, 2 heads, one key/value head, dropout 0.1) with
    reversible layers (a custom autograd Function recomputing each block with its recorded RNG
    state) after an input projection (the Function's input needs a grad): a training step (MSE to a
    target, backward, SGD)."""
    import torch
    from linformer import Linformer

    torch.manual_seed(0)
    cfg = dict(dim=32, seq_len=16, depth=2, k=8, heads=2, one_kv_head=True, reversible=True, dropout=0.1)
    model = torch.nn.Sequential(torch.nn.Linear(32, 32), Linformer(**cfg))

    def loss_fn(m, x, y):
        return torch.nn.functional.mse_loss(m(x), y)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"x": torch.randn(2, 16, 32, generator=g),
                                             "y": torch.randn(2, 16, 32, generator=g)}


def _nsa_train():
    """native-sparse-attention-pytorch's Transformer with SparseAttention (64 tokens, dim 32, depth
    2, 2 heads, 1 kv head, causal; compressed blocks of 4, selection blocks of 4, 2 selected blocks,
    sliding window 8; the plain PyTorch path, no flex or triton): a training step (its next-token
    loss with `return_loss=True`, backward, SGD)."""
    import torch
    from native_sparse_attention_pytorch.transformer import Transformer

    torch.manual_seed(0)
    sparse = dict(sliding_window_size=8, compress_block_size=4, compress_block_sliding_stride=4,
                  selection_block_size=4, num_selected_blocks=2)
    cfg = dict(num_tokens=64, dim=32, depth=2, dim_head=16, heads=2, kv_heads=1, use_sparse_attn=True,
               sparse_attn_kwargs=sparse)
    model = Transformer(**cfg)

    def loss_fn(m, ids):
        return m(ids, return_loss=True)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"ids": torch.randint(0, 64, (2, 17), generator=g)}


def _nsa_sample():
    """native-sparse-attention-pytorch's Transformer (SparseAttention, as in nsa-train, eval mode):
    greedy `sample` (temperature 0) of 5 tokens from a 12-token prompt with the KV cache (the
    `forward_inference` path after the first token)."""
    import torch
    from native_sparse_attention_pytorch.transformer import Transformer

    torch.manual_seed(0)
    sparse = dict(sliding_window_size=8, compress_block_size=4, compress_block_sliding_stride=4,
                  selection_block_size=4, num_selected_blocks=2)
    cfg = dict(num_tokens=64, dim=32, depth=2, dim_head=16, heads=2, kv_heads=1, use_sparse_attn=True,
               sparse_attn_kwargs=sparse)
    model = Transformer(**cfg).eval()

    def sample(prompt):
        return model.sample(prompt, 17, temperature=0.0, use_cache_kv=True)
    g = torch.Generator().manual_seed(1)
    return {**cfg, "sample": "5 tokens, temperature 0, kv cache"}, sample, \
        {"prompt": torch.randint(0, 64, (1, 12), generator=g)}


def _ring_transformer_train():
    """ring-attention-pytorch's RingTransformer on one process (64 tokens, dim 32, depth 2, 2 heads,
    causal, bucket size 8, ring attention off: the CPU bucketed flash-attention autograd Function,
    rotary positions): a training step (its next-token loss with a padding mask, backward, SGD)."""
    import torch
    from ring_attention_pytorch import RingTransformer

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, dim=32, depth=2, causal=True, dim_head=16, heads=2, bucket_size=8,
               ring_attn=False, use_cuda_kernel=False)
    model = RingTransformer(**cfg)

    def loss_fn(m, x, mask):
        return m(x, mask=mask, return_loss=True)
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(2, 20, dtype=torch.bool)
    mask[1, 16:] = False
    return cfg, _TrainStep(model, loss_fn), {"x": torch.randint(0, 64, (2, 21), generator=g), "mask": mask}


# --------------------------------------------------------------------------------------------------
# pykan 0.2.8, routing-transformer 1.6.1, sinkhorn-transformer 0.11.4, colt5-attention 0.11.2,
# ncps 1.0.1 and lion-pytorch 0.2.5: round 15, code nobody tuned on, measured before anything was
# changed for them


def _kan_train():
    """A user's KAN fit step with pykan, as `MultKAN.fit` does it: KAN [3, 4, 1] (grid 5, cubic
    B-splines, symbolic branch on, activations saved), `update_grid` from the batch (sorted samples,
    a least-squares refit of the spline coefficients), MSE plus the `edge_forward_spline_n`
    regularization, backward, SGD."""
    import torch
    from kan import KAN

    torch.manual_seed(0)
    cfg = dict(width=[3, 4, 1], grid=5, k=3, seed=0, auto_save=False, device="cpu")
    model = KAN(**cfg)

    def loss_fn(m, x, y):
        m.update_grid(x)
        reg = m.get_reg("edge_forward_spline_n", 1.0, 2.0, 0.0, 0.0)
        return torch.nn.functional.mse_loss(m(x), y) + 1e-3 * reg
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"x": torch.rand(16, 3, generator=g) * 2 - 1,
                                             "y": torch.randn(16, 1, generator=g)}


def _kan_forward():
    """pykan's KAN with multiplication nodes (width [3, [2, 2], 1], grid 4, activations saved for
    the plots and the regularization), eval forward."""
    import torch
    from kan import KAN

    torch.manual_seed(0)
    cfg = dict(width=[3, [2, 2], 1], grid=4, k=3, seed=0, auto_save=False, device="cpu")
    model = KAN(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    return cfg, model, {"x": torch.rand(16, 3, generator=g) * 2 - 1}


def _routing_lm():
    """RoutingTransformerLM (64 tokens, dim 32, depth 2, 2 heads of which 1 local, window 8, causal;
    online k-means routing), eval forward on 2 sequences of 32 tokens."""
    import torch
    from routing_transformer import RoutingTransformerLM

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, dim=32, heads=2, depth=2, max_seq_len=32, window_size=8, causal=True,
               n_local_attn_heads=1)
    model = RoutingTransformerLM(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    return cfg, model, {"x": torch.randint(0, 64, (2, 32), generator=g)}


def _routing_train():
    """RoutingTransformerLM (as routing-lm, training mode: the k-means EMA update and its commitment
    loss): a training step (next-token cross entropy plus the auxiliary loss, backward, SGD)."""
    import torch
    from routing_transformer import RoutingTransformerLM

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, dim=32, heads=2, depth=2, max_seq_len=32, window_size=8, causal=True,
               n_local_attn_heads=1)
    model = RoutingTransformerLM(**cfg)

    def loss_fn(m, x):
        logits, aux = m(x[:, :-1])
        return torch.nn.functional.cross_entropy(logits.transpose(1, 2), x[:, 1:]) + aux
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"x": torch.randint(0, 64, (2, 33), generator=g)}


def _sinkhorn_generate():
    """sinkhorn-transformer's AutoregressiveWrapper around a SinkhornTransformerLM (64 tokens, dim 32,
    depth 2, 2 heads of which 1 local, bucket 8, causal; the Autopadder pads to the bucket size):
    `generate` of 4 tokens from a 10-token prompt with an eos token, top-k keeping one logit (so
    the multinomial draw is deterministic), in a user function."""
    import torch
    from sinkhorn_transformer import SinkhornTransformerLM
    from sinkhorn_transformer.autoregressive_wrapper import AutoregressiveWrapper

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, dim=32, heads=2, depth=2, max_seq_len=32, bucket_size=8, causal=True,
               n_local_attn_heads=1)
    model = AutoregressiveWrapper(SinkhornTransformerLM(**cfg)).eval()

    def generate(prompt):
        return model.generate(prompt, 4, eos_token=63, filter_thres=0.984)
    g = torch.Generator().manual_seed(1)
    return {**cfg, "generate": "4 tokens, top-1, eos 63"}, generate, \
        {"prompt": torch.randint(0, 63, (2, 10), generator=g)}


def _sinkhorn_reversible_train():
    """SinkhornTransformerLM (64 tokens, dim 32, depth 2, 2 heads, bucket 8, non-causal, sortcut of 2
    buckets, reversible layers recording the RNG state, chunked feed-forward, attention dropout
    0.1): a training step (token cross entropy, backward, SGD)."""
    import torch
    from sinkhorn_transformer import SinkhornTransformerLM

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, dim=32, heads=2, depth=2, max_seq_len=32, bucket_size=8, causal=False,
               n_sortcut=2, reversible=True, ff_chunks=2, attn_dropout=0.1)
    model = SinkhornTransformerLM(**cfg)

    def loss_fn(m, x):
        return torch.nn.functional.cross_entropy(m(x).transpose(1, 2), x)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"x": torch.randint(0, 64, (2, 32), generator=g)}


def _colt5_block():
    """colt5-attention's ConditionalRoutedTransformerBlock (dim 32; light local attention of window 8
    and light feed-forward on every token, heavy attention and feed-forward on 8 tokens routed by
    coordinate descent, 2 key/value routes, null query tokens), eval forward on 2 sequences of 32
    tokens with a padding mask whose second row ends 6 tokens early."""
    import torch
    from colt5_attention import ConditionalRoutedTransformerBlock

    torch.manual_seed(0)
    cfg = dict(dim=32, light_dim_head=8, light_heads=2, light_window_size=8, heavy_dim_head=8, heavy_heads=4,
               light_ff_mult=0.5, heavy_ff_mult=2, num_heavy_ff_tokens=8, num_heavy_attn_tokens_q=8,
               num_heavy_attn_tokens_kv=8, num_routed_kv=2)
    model = ConditionalRoutedTransformerBlock(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(2, 32, dtype=torch.bool)
    mask[1, 26:] = False
    return cfg, model, {"x": torch.randn(2, 32, 32, generator=g), "mask": mask}


class _LTCTrainStep(_TrainStep):
    """The training step of `_TrainStep`, then the LTC cell's explicit parameter constraints (the
    clipping ncps' examples apply after each optimizer step)."""

    def step(self, **batch):
        loss = super().step(**batch)
        self.model.rnn_cell.apply_weight_constraints()
        return loss


def _ltc_train():
    """ncps' LTC (liquid time-constant RNN) on an AutoNCP wiring (10 neurons, 2 motor; the sparse
    wiring drawn with numpy at build time), 3 ODE unfolds, explicit parameter constraints: a
    training step over 5 steps of 2 sequences (MSE, backward, SGD, constraint clipping)."""
    import torch
    from ncps.torch import LTC
    from ncps.wirings import AutoNCP

    torch.manual_seed(0)
    cfg = dict(input_size=4, units="AutoNCP(10, 2, seed 22222)", batch_first=True, ode_unfolds=3,
               implicit_param_constraints=False)
    model = LTC(4, AutoNCP(10, 2), batch_first=True, ode_unfolds=3, implicit_param_constraints=False)

    def loss_fn(m, x, y):
        out, _ = m(x)
        return torch.nn.functional.mse_loss(out, y)
    g = torch.Generator().manual_seed(1)
    return cfg, _LTCTrainStep(model, loss_fn), {"x": torch.randn(2, 5, 4, generator=g),
                                                "y": torch.randn(2, 5, 2, generator=g)}


class _LionStep:
    """`step()` of lion-pytorch's Lion (decoupled weight decay) and of its cautious variant on two
    parameters each, compiled on their own as in `_OptStep` (gradients set before each call)."""

    def __init__(self):
        import torch
        from lion_pytorch import Lion
        from lion_pytorch.cautious_lion import Lion as CautiousLion

        torch.manual_seed(0)
        self.params = [torch.nn.Parameter(torch.randn(8, 4)), torch.nn.Parameter(torch.randn(4)),
                       torch.nn.Parameter(torch.randn(6, 3)), torch.nn.Parameter(torch.randn(3))]
        self.opts = [Lion(self.params[:2], lr=1e-2, weight_decay=1e-2, decoupled_weight_decay=True),
                     CautiousLion(self.params[2:], lr=1e-2, weight_decay=1e-2, cautious_factor=0.1)]

    def __call__(self, g):
        import torch

        for i, p in enumerate(self.params):
            p.grad = (g.sum() + 0.5 * i - 0.7) * torch.ones_like(p) + g[i] * torch.linspace(-1, 1, p.numel()).view_as(p)
        for opt in self.opts:
            opt.step()
        return [p.detach().clone() for p in self.params]


def _lion_step():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"optimizers": "Lion (decoupled wd), cautious Lion (factor 0.1)", "lr": 1e-2}, _LionStep(), \
        {"g": torch.randn(4, generator=g)}


# --------------------------------------------------------------------------------------------------
# round 16


def _chain_adj(n):
    """A chain graph's adjacency over n nodes (i ~ i+1) and one chord (0 ~ n//2)."""
    import torch

    adj = torch.zeros(n, n, dtype=torch.bool)
    i = torch.arange(n - 1)
    adj[i, i + 1] = True
    adj[i + 1, i] = True
    adj[0, n // 2] = adj[n // 2, 0] = True
    return adj


def _egnn_network():
    """egnn-pytorch's EGNN_Network (10 atom tokens, dim 16, depth 2, 2 adjacency degrees embedded as
    edges, neighbours only along the sparse adjacency, masks): eval forward on 2 graphs of 8 nodes, the
    second padded by 2."""
    import torch
    from egnn_pytorch import EGNN_Network

    torch.manual_seed(0)
    cfg = dict(num_tokens=10, dim=16, depth=2, num_adj_degrees=2, adj_dim=4, only_sparse_neighbors=True,
               m_dim=8)
    model = EGNN_Network(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(2, 8, dtype=torch.bool)
    mask[1, 6:] = False
    return cfg, model, {"feats": torch.randint(0, 10, (2, 8), generator=g),
                        "coors": torch.randn(2, 8, 3, generator=g), "adj_mat": _chain_adj(8), "mask": mask}


def _en_transformer_train():
    """En-transformer's EnTransformer (dim 32, depth 1, 1 head of 32, 3 nearest neighbours plus the
    adjacency's, 2 adjacency degrees embedded, 1 global linear-attention head): a training step on
    node features and coordinates (MSE on both, backward, SGD)."""
    import torch
    from en_transformer import EnTransformer

    torch.manual_seed(0)
    cfg = dict(dim=32, depth=1, dim_head=32, heads=1, neighbors=3, num_adj_degrees=2, adj_dim=4,
               num_global_linear_attn_heads=1)
    model = EnTransformer(**cfg)

    def loss_fn(m, feats, coors, adj_mat, mask):
        f, c = m(feats, coors, adj_mat=adj_mat, mask=mask)
        return f.pow(2).mean() + (c - coors).pow(2).mean()
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(2, 8, dtype=torch.bool)
    mask[1, 7:] = False
    return cfg, _TrainStep(model, loss_fn), {"feats": torch.randn(2, 8, 32, generator=g),
                                             "coors": torch.randn(2, 8, 3, generator=g),
                                             "adj_mat": _chain_adj(8), "mask": mask}


def _compressive_generate():
    """compressive-transformer-pytorch's AutoregressiveWrapper(CompressiveTransformer) (64 tokens, dim
    32, depth 2, 2 heads, segments of 8, memory 8, compressed memory 2): `generate` of 6 tokens from a
    12-token prompt (one primed segment) with an eos token, top-k keeping one logit, in a user
    function."""
    import torch
    from compressive_transformer_pytorch import CompressiveTransformer
    from compressive_transformer_pytorch.autoregressive_wrapper import AutoregressiveWrapper

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, dim=32, seq_len=8, depth=2, heads=2, mem_len=8, cmem_ratio=4)
    model = AutoregressiveWrapper(CompressiveTransformer(**cfg)).eval()

    def generate(prompt):
        return model.generate(prompt, 6, eos_token=63, filter_thres=0.984)
    g = torch.Generator().manual_seed(1)
    return {**cfg, "generate": "6 tokens, top-1, eos 63"}, generate, \
        {"prompt": torch.randint(0, 63, (2, 12), generator=g)}


def _compressive_train():
    """CompressiveTransformer (as compressive-generate, GRU-gated residuals, training mode: the
    compressed-memory reconstruction loss): a training step over two segments of 8 tokens carrying the
    memories (cross entropy plus the auxiliary loss, backward, SGD)."""
    import torch
    from compressive_transformer_pytorch import CompressiveTransformer

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, dim=32, seq_len=8, depth=2, heads=2, mem_len=8, cmem_ratio=4)
    model = CompressiveTransformer(**cfg)

    def loss_fn(m, x):
        loss, mem = 0., None
        for seg in x.split(9, dim=1):
            logits, mem, aux = m(seg[:, :-1], memories=mem)
            loss = loss + torch.nn.functional.cross_entropy(logits.transpose(1, 2), seg[:, 1:]) + aux
        return loss
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"x": torch.randint(0, 64, (2, 18), generator=g)}


def _torchcrf_tagger():
    """TorchCRF's CRF (5 labels) under a user's tagger (embedding, linear emissions): the negative log
    likelihood with a padding mask and the Viterbi decode (a list of label lists) in a user
    function."""
    import torch
    from TorchCRF import CRF

    torch.manual_seed(0)
    emb, proj, crf = torch.nn.Embedding(20, 8), torch.nn.Linear(8, 5), CRF(5, use_gpu=False)

    def tag(tokens, labels, mask):
        h = proj(emb(tokens))
        nll = -crf(h, labels, mask).mean()
        return nll, crf.viterbi_decode(h, mask)
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(2, 6, dtype=torch.bool)
    mask[1, 4:] = False
    return {"num_labels": 5, "vocab": 20, "dim": 8}, tag, \
        {"tokens": torch.randint(0, 20, (2, 6), generator=g), "labels": torch.randint(0, 5, (2, 6), generator=g),
         "mask": mask}


class _MRBPStep(_TrainStep):
    """A training step whose backward the model does itself: recurrent-memory-transformer-pytorch's
    memory-replay backpropagation returns the (already backpropagated) loss; then SGD."""

    def step(self, **batch):
        self.opt.zero_grad(set_to_none=True)
        loss = self.loss_fn(self.model, **batch)
        self.opt.step()
        return loss


def _rmt_mrbp_train():
    """recurrent-memory-transformer-pytorch's RecurrentMemoryTransformerWrapper (64 tokens, dim 32,
    depth 1, 2 heads of 16, 2 memory tokens, segments of 8, XL memories, 2 hyper-connection streams):
    a training step with memory-replay backpropagation over 3 segments (the wrapper calls backward
    per segment, replaying memories with requires_grad), then SGD."""
    import random

    import torch
    from recurrent_memory_transformer_pytorch import RecurrentMemoryTransformer, RecurrentMemoryTransformerWrapper

    torch.manual_seed(0)
    random.seed(0)  # hyper-connections pick each layer's initial residual stream with random.randrange
    cfg = dict(dim=32, num_tokens=64, depth=1, heads=2, dim_head=16, num_memory_tokens=2, seq_len=8,
               num_residual_streams=2)
    model = RecurrentMemoryTransformerWrapper(RecurrentMemoryTransformer(**cfg))

    def loss_fn(m, x):
        return m(x, memory_replay_backprop=True)
    g = torch.Generator().manual_seed(1)
    return {**cfg, "memory_replay_backprop": True}, _MRBPStep(model, loss_fn), \
        {"x": torch.randint(0, 64, (2, 21), generator=g)}


def _freia_inn():
    """FrEIA's SequenceINN of two AllInOneBlocks (affine coupling, ActNorm-style global affine, learned
    Householder permutation) and a GLOWCouplingBlock, on 6 features: the forward with log-det, a
    standard-normal negative log likelihood and the reverse pass, in a user function."""
    import numpy as np
    import torch
    import FrEIA.framework as Ff
    import FrEIA.modules as Fm

    torch.manual_seed(0)
    np.random.seed(0)  # AllInOneBlock draws its permutation (and scipy its rotation) with numpy

    def subnet(c_in, c_out):
        return torch.nn.Sequential(torch.nn.Linear(c_in, 16), torch.nn.ReLU(), torch.nn.Linear(16, c_out))
    inn = Ff.SequenceINN(6)
    inn.append(Fm.AllInOneBlock, subnet_constructor=subnet, learned_householder_permutation=2)
    inn.append(Fm.AllInOneBlock, subnet_constructor=subnet, permute_soft=False)
    inn.append(Fm.GLOWCouplingBlock, subnet_constructor=subnet, clamp=2.0)
    inn.eval()

    def nll_and_inverse(x):
        z, log_jac = inn(x)
        nll = 0.5 * z.pow(2).sum(1) - log_jac
        x_rec, _ = inn(z, rev=True)
        return nll.mean(), x_rec
    g = torch.Generator().manual_seed(1)
    return {"dims": 6, "blocks": "AllInOne(householder 2), AllInOne, GLOW(clamp 2)"}, nll_and_inverse, \
        {"x": torch.randn(4, 6, generator=g)}


def _freia_iresnet_step():
    """FrEIA's SequenceINN of ActNorm (initialised from the first batch) and an IResNetLayer (6
    features, hidden 12, 3 power-series terms of the log-det estimated by Hutchinson with
    `torch.autograd.grad`, 5 fixed-point iterations in reverse): a user's step that applies the
    i-ResNet's Lipschitz (spectral-norm) correction, then the NLL and the reverse pass."""
    import torch
    import FrEIA.framework as Ff
    import FrEIA.modules as Fm

    torch.manual_seed(0)
    inn = Ff.SequenceINN(6)
    inn.append(Fm.ActNorm)
    inn.append(Fm.IResNetLayer, internal_size=12, jacobian_iterations=3, fixed_point_iterations=5,
               lipschitz_iterations=3, lipschitz_batchsize=4, spectral_norm_max=0.5)
    block = inn.module_list[1]

    def step(x):
        block.lipschitz_correction()
        z, log_jac = inn(x)
        nll = 0.5 * z.pow(2).sum(1) - log_jac
        x_rec, _ = inn(z, rev=True)
        return nll.mean().detach(), x_rec.detach()
    g = torch.Generator().manual_seed(1)
    return {"dims": 6, "blocks": "ActNorm, IResNetLayer(hidden 12, 3 jacobian terms, 5 fixed-point)"}, step, \
        {"x": torch.randn(4, 6, generator=g)}


# --------------------------------------------------------------------------------------------------
# round 17


def _blobs(g, n=10):
    """Three well-separated 2-D blobs of n points each."""
    import torch

    centres = torch.tensor([[4.0, 0.0], [-4.0, 0.0], [0.0, 4.0]])
    return torch.cat([torch.randn(n, 2, generator=g) + c for c in centres])


def _kmeans_fit():
    """kmeans-pytorch's `kmeans` (euclidean, 3 clusters, tol 1e-4: initial centres drawn with
    `np.random.choice`, a `while True` loop whose exit tests the centre shift, the `nonzero` of each
    cluster, a tqdm meter, a `print`) on three blobs of 10 points, then `kmeans_predict` (cosine) of 5
    new points, in a user function that seeds numpy first."""
    import torch

    def fit_predict(x, y):
        import numpy as np
        from kmeans_pytorch import kmeans, kmeans_predict

        np.random.seed(0)
        ids, centres = kmeans(x, num_clusters=3, distance="euclidean", tol=1e-4)
        return ids, centres, kmeans_predict(y, centres, distance="cosine")
    g = torch.Generator().manual_seed(1)
    return {"num_clusters": 3, "fit": "euclidean", "predict": "cosine", "tol": 1e-4}, fit_predict, \
        {"x": _blobs(g), "y": torch.randn(5, 2, generator=g)}


def _flowtorch_flow():
    """flowtorch's Flow (a standard-normal base on 3 dims, an AffineAutoregressive bijector whose MADE
    parameters are built lazily, BijectiveTensor outputs carrying their parents): `log_prob` of 5
    points and a seeded `rsample` of 4, in a user function."""
    import torch
    import flowtorch.bijectors as bij
    import flowtorch.distributions as fdist

    torch.manual_seed(0)
    base = torch.distributions.Independent(torch.distributions.Normal(torch.zeros(3), torch.ones(3)), 1)
    flow = fdist.Flow(base, bij.AffineAutoregressive())

    def log_prob_and_sample(x):
        lp = flow.log_prob(x)
        torch.manual_seed(3)
        return lp, flow.rsample((4,))
    g = torch.Generator().manual_seed(1)
    return {"event_shape": 3, "bijector": "AffineAutoregressive (MADE)"}, log_prob_and_sample, \
        {"x": torch.randn(5, 3, generator=g)}


def _htransformer_generate():
    """h-transformer-1d's AutoregressiveWrapper around an HTransformer1D (64 tokens, dim 32, depth 2,
    2 heads of 16, block 4, causal hierarchical attention padded to a power of 2): `generate` of 4
    tokens from a 10-token prompt with an eos token, top-k keeping one logit, in a user function."""
    import torch
    from h_transformer_1d import HTransformer1D
    from h_transformer_1d.autoregressive_wrapper import AutoregressiveWrapper

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, dim=32, depth=2, max_seq_len=32, heads=2, dim_head=16, block_size=4, causal=True)
    model = AutoregressiveWrapper(HTransformer1D(**cfg)).eval()

    def generate(prompt):
        return model.generate(prompt, 4, eos_token=63, filter_thres=0.984)
    g = torch.Generator().manual_seed(1)
    return {**cfg, "generate": "4 tokens, top-1, eos 63"}, generate, \
        {"prompt": torch.randint(0, 63, (2, 10), generator=g)}


def _htransformer_lm():
    """HTransformer1D (64 tokens, dim 32, depth 2, 2 heads of 16, block 4, non-causal, rotary
    embeddings, token shifting, max 64), eval forward on 2 sequences of 30 tokens (padded to 32) with
    a padding mask whose second row ends 6 tokens early (masked coarsening)."""
    import torch
    from h_transformer_1d import HTransformer1D

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, dim=32, depth=2, max_seq_len=64, heads=2, dim_head=16, block_size=4, causal=False,
               shift_tokens=True)
    model = HTransformer1D(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(2, 30, dtype=torch.bool)
    mask[1, 24:] = False
    return cfg, model, {"x": torch.randint(0, 64, (2, 30), generator=g), "mask": mask}


def _mega_lm():
    """mega-pytorch's Mega (64 tokens, dim 16, depth 2, 4 EMA heads, causal, Laplacian attention; the
    multi-headed EMA as an FFT convolution sized with scipy's `next_fast_len`), eval forward on 2
    sequences of 12 tokens."""
    import torch
    from mega_pytorch import Mega

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, dim=16, depth=2, ema_heads=4, attn_dim_qk=8, attn_dim_value=32,
               laplacian_attn_fn=True)
    model = Mega(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    return cfg, model, {"x": torch.randint(0, 64, (2, 12), generator=g)}


class _TinyEncoder:
    """A user's small token encoder for the MLM wrapper: embedding, one post-norm TransformerEncoderLayer
    (no dropout), output projection (built lazily: torch is imported in the child only)."""

    @staticmethod
    def build(num_tokens, dim):
        import torch

        class Encoder(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = torch.nn.Embedding(num_tokens, dim)
                self.layer = torch.nn.TransformerEncoderLayer(dim, 2, 2 * dim, dropout=0.0, batch_first=True)
                self.out = torch.nn.Linear(dim, num_tokens)

            def forward(self, x):
                return self.out(self.layer(self.emb(x)))
        return Encoder()


def _mlm_train():
    """mlm-pytorch's MLM around a user's small encoder (32 tokens, dim 16): masking 15% of the
    non-special tokens by a random top-k, random-token replacement 10%, [mask] replacement 90%; a
    training step (the masked cross entropy, backward, SGD) seeded in the user's loss."""
    import torch
    from mlm_pytorch import MLM

    torch.manual_seed(0)
    cfg = dict(num_tokens=32, mask_prob=0.15, replace_prob=0.9, random_token_prob=0.1, mask_token_id=2,
               pad_token_id=0, mask_ignore_token_ids=[1])
    model = MLM(_TinyEncoder.build(32, 16), **cfg)

    def loss_fn(m, x):
        torch.manual_seed(3)
        return m(x)
    g = torch.Generator().manual_seed(1)
    return {**cfg, "dim": 16}, _TrainStep(model, loss_fn), {"x": torch.randint(3, 32, (2, 16), generator=g)}


def _charformer_gbst():
    """charformer-pytorch's GBST (gradient-based subword tokenization: 64 byte tokens, dim 16, block
    sizes 1 to 4 with mean pooling, score consensus attention, downsampling by 4), eval forward on 2
    sequences of 14 bytes with a padding mask whose second row ends 4 bytes early."""
    import torch
    from charformer_pytorch import GBST

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, dim=16, max_block_size=4, downsample_factor=4, score_consensus_attn=True)
    model = GBST(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(2, 14, dtype=torch.bool)
    mask[1, 10:] = False
    return cfg, model, {"x": torch.randint(0, 64, (2, 14), generator=g), "mask": mask}


# --------------------------------------------------------------------------------------------------
# round 18


def _soft_moe_train():
    """soft-moe-pytorch's SoftMoE (dim 16, 4 experts of 2 slots each for 8 tokens, RMS norms, an
    `Experts` module that moves the experts it does not use to the CPU) inside a user's block
    (residual, output projection): a training step with gumbel-noised dispatch logits and a padding
    mask whose second row ends 3 tokens early, seeded in the user's loss."""
    import torch
    from soft_moe_pytorch import SoftMoE

    torch.manual_seed(0)
    cfg = dict(dim=16, seq_len=8, num_experts=4, expert_mult=2)
    moe = SoftMoE(**cfg)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.moe, self.out = moe, torch.nn.Linear(16, 1)

        def forward(self, x, mask):
            return self.out(x + self.moe(x, mask=mask, add_noise=True, noise_mult=0.5)).squeeze(-1)

    def loss_fn(m, x, mask, y):
        torch.manual_seed(3)
        return torch.nn.functional.mse_loss(m(x, mask), y)
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(2, 8, dtype=torch.bool)
    mask[1, 5:] = False
    return {**cfg, "add_noise": True, "noise_mult": 0.5}, _TrainStep(Block(), loss_fn), \
        {"x": torch.randn(2, 8, 16, generator=g), "mask": mask, "y": torch.randn(2, 8, generator=g)}


def _soft_moe_dynamic():
    """soft-moe-pytorch's DynamicSlotsSoftMoE (dim 16, 4 experts, GEGLU experts; slot embeddings
    projected from the mean of each group of 4 consecutive tokens), eval forward on 2 sequences of 10
    tokens (padded to 12: `pad_to_multiple` tests `float.is_integer()`) with a padding mask whose
    second row ends 3 tokens early."""
    import torch
    from soft_moe_pytorch import DynamicSlotsSoftMoE

    torch.manual_seed(0)
    cfg = dict(dim=16, num_experts=4, expert_mult=2, geglu=True)
    model = DynamicSlotsSoftMoE(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(2, 10, dtype=torch.bool)
    mask[1, 7:] = False
    return cfg, model, {"x": torch.randn(2, 10, 16, generator=g), "mask": mask}


def _pkm_train():
    """product-key-memory's PKM (dim 16, 2 heads of 8, 8x8 = 64 product keys, top-4, a masked
    BatchNorm1d on the queries instead of the layer norm: `x[mask]` then `initial_x[mask] = x`,
    embedding values concatenated per head and combined by a linear layer) after a user's linear layer: a training step (training mode) with an input
    mask whose second row ends 2 tokens early (repeated for each query row the norm sees), gumbel noise on the key scores and a trainable-memory
    mask over half the memories, seeded in the user's loss."""
    import torch
    from product_key_memory import PKM

    torch.manual_seed(0)
    cfg = dict(dim=16, heads=2, num_keys=8, topk=4, dim_head=8, use_layernorm=False, concat_values_and_combine=True)
    pkm = PKM(**cfg)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inp, self.pkm, self.out = torch.nn.Linear(16, 16), pkm, torch.nn.Linear(16, 1)

        def forward(self, x, mask, trainable):
            h = self.inp(x)
            # the masked batch norm sees the queries as (batch, 2 query halves, heads) rows
            rows = mask.repeat_interleave(2 * 2, dim=0)
            return self.out(h + self.pkm(h, input_mask=rows, mem_trainable_mask=trainable,
                                         gumbel_noise_scale=0.1)).squeeze(-1)

    def loss_fn(m, x, mask, trainable, y):
        torch.manual_seed(3)
        return torch.nn.functional.mse_loss(m(x, mask, trainable), y)
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(2, 6, dtype=torch.bool)
    mask[1, 4:] = False
    trainable = torch.zeros(64, dtype=torch.bool)
    trainable[::2] = True
    return {**cfg, "gumbel_noise_scale": 0.1, "mem_trainable": "every other memory"}, _TrainStep(Model(), loss_fn), \
        {"x": torch.randn(2, 6, 16, generator=g), "mask": mask, "trainable": trainable,
         "y": torch.randn(2, 6, generator=g)}


def _pkm_generate():
    """product-key-memory's Transformer (32 tokens, dim 16, depth 2, 2 heads of 8, causal attention,
    a PKM of 8x8 keys, top-4, in layer 1): `generate` of 4 tokens from a 5-token prompt (top-k then
    `torch.multinomial`, under `no_grad` and its eval decorator), seeded in a user function."""
    import contextlib
    import io

    import torch
    from product_key_memory.transformer import Transformer

    torch.manual_seed(0)
    cfg = dict(dim=16, num_tokens=32, depth=2, seq_len=8, pkm_layers=(1,), dim_head=8, heads=2,
               pkm_kwargs=dict(heads=2, num_keys=8, topk=4, dim_head=8))
    with contextlib.redirect_stdout(io.StringIO()):  # its constructor prints the PKM settings
        model = Transformer(**cfg)

    def generate(prompt):
        torch.manual_seed(3)
        return model.generate(prompt, 4, filter_thres=0.8)
    g = torch.Generator().manual_seed(1)
    return {**cfg, "generate": "4 tokens, top-k 0.8, multinomial"}, generate, \
        {"prompt": torch.randint(0, 32, (2, 5), generator=g)}


def _megabyte_generate():
    """MEGABYTE-pytorch's MEGABYTE (64 tokens, two stages of dims 32 and 16, depth 1 each, patches of
    4 and a global length of 4, 2 heads of 8; a beartype-checked constructor): `generate` of the
    remaining 12 tokens after a 4-token prompt (forward on a growing, padded sequence, top-k, gumbel
    sampling, a tqdm loop), seeded in a user function."""
    import torch
    from MEGABYTE_pytorch import MEGABYTE

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, dim=(32, 16), depth=(1, 1), max_seq_len=(4, 4), dim_head=8, heads=2)
    model = MEGABYTE(**cfg).eval()

    def generate(prime):
        torch.manual_seed(3)
        with torch.no_grad():
            return model.generate(prime, filter_thres=0.9)
    g = torch.Generator().manual_seed(1)
    return {**cfg, "generate": "12 tokens, top-k 0.9, gumbel"}, generate, \
        {"prime": torch.randint(0, 64, (2, 4), generator=g)}


def _megabyte_train():
    """MEGABYTE (64 tokens, two stages of dims 32 and 16, depth (2, 1), max lengths (4, 4), 2 heads of
    8, relative position bias, absolute position embeddings): a training step on the built-in loss
    (`return_loss=True`, pad id 0 ignored) of 2 flat sequences of 14 tokens padded to 16."""
    import torch
    from MEGABYTE_pytorch import MEGABYTE

    torch.manual_seed(0)
    cfg = dict(num_tokens=64, dim=(32, 16), depth=(2, 1), max_seq_len=(4, 4), dim_head=8, heads=2, rel_pos=True,
               pos_emb=True)
    model = MEGABYTE(**cfg)

    def loss_fn(m, ids):
        return m(ids, return_loss=True)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"ids": torch.randint(1, 64, (2, 14), generator=g)}


def _moa_forward():
    """mixture-of-attention's MixtureOfAttention (dim 32, 2 experts, 2 heads of 8, 6 queries and 6
    key/values routed per expert by colt5-attention's coordinate-descent router without triton, no
    flash attention, averaged routed outputs, a learned null token for unrouted positions), eval
    forward on 2 sequences of 16 tokens with a padding mask whose second row ends 5 tokens early."""
    import torch
    from mixture_of_attention import MixtureOfAttention

    torch.manual_seed(0)
    cfg = dict(dim=32, num_routed_queries=6, num_routed_key_values=6, num_experts=2, dim_head=8, heads=2,
               use_triton=False, flash_attn=False, average_routed=True)
    model = MixtureOfAttention(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(2, 16, dtype=torch.bool)
    mask[1, 11:] = False
    return cfg, model, {"x": torch.randn(2, 16, 32, generator=g), "mask": mask}


def _moa_autoregressive_train():
    """mixture-of-attention's autoregressive Transformer in its AutoregressiveWrapper (32 tokens, dim
    16, depth 1, 2 experts, 2 heads of 8, local attention windows of 4, 2 queries and 2 key/values
    routed per window and expert, routed rotary embeddings, no triton): a training step on the
    wrapper's next-token loss for 2 sequences of 13 tokens."""
    import torch
    from mixture_of_attention.autoregressive_wrapper import AutoregressiveWrapper
    from mixture_of_attention.transformer import Transformer

    torch.manual_seed(0)
    cfg = dict(dim=16, num_tokens=32, depth=1, seq_len=16, local_attn_window_size=4, num_routed_queries=2,
               num_routed_key_values=2, num_experts=2, dim_head=8, heads=2, use_triton=False)
    model = AutoregressiveWrapper(Transformer(**cfg))

    def loss_fn(m, x):
        return m(x)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"x": torch.randint(0, 32, (2, 13), generator=g)}


def _mea_flash_train():
    """memory-efficient-attention-pytorch's Transformer (32 tokens, dim 16, depth 2, 2 heads of 8,
    causal; its FlashAttention as a custom autograd Function looping over query buckets of 4 and key
    buckets of 4, skipping fully masked causal blocks; reversible layers whose autograd Function
    records and replays RNG states), a training step on its built-in cross entropy for 2 sequences of
    12 tokens."""
    import torch
    from memory_efficient_attention_pytorch.transformer import Transformer

    torch.manual_seed(0)
    cfg = dict(num_tokens=32, max_seq_len=16, dim=16, depth=2, causal=True, dim_head=8, heads=2, ff_chunks=2,
               use_flash_attn=True, q_bucket_size=4, k_bucket_size=4)
    model = Transformer(**cfg)

    def loss_fn(m, x, labels):
        return m(x, labels=labels)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), \
        {"x": torch.randint(0, 32, (2, 12), generator=g), "labels": torch.randint(0, 32, (2, 12), generator=g)}


def _mea_chunked_attention():
    """memory-efficient-attention-pytorch's Attention (dim 16, 2 heads of 8, non-causal, the
    memory-efficient chunked path: query buckets of 4, key buckets of 3, per-chunk summaries that are
    checkpointed when an input needs grad) on 2 sequences of 10 tokens with a key padding mask whose
    second row ends 3 tokens early and an additive attention bias, eval forward in a user function."""
    import torch
    from memory_efficient_attention_pytorch import Attention

    torch.manual_seed(0)
    cfg = dict(dim=16, heads=2, dim_head=8, memory_efficient=True, q_bucket_size=4, k_bucket_size=3)
    attn = Attention(**cfg).eval()

    def attend(x, mask, bias):
        return attn(x, mask=mask, attn_bias=bias)
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(2, 10, dtype=torch.bool)
    mask[1, 7:] = False
    return cfg, attend, {"x": torch.randn(2, 10, 16, generator=g), "mask": mask,
                         "bias": torch.randn(2, 10, 10, generator=g)}


def _specdec_two_models():
    """speculative-decoding's `speculative_decoding` (Leviathan et al.'s algorithm 1: a small Decoder
    of depth 1 drafts gamma=3 tokens with kv caches, a larger Decoder of depth 2 (32 tokens, dim 16, 2
    heads of 8) verifies them, the first rejection found by a cumsum, the caches realigned per row, a
    `while (seq_lens < seq_len).any()` loop) to 12 tokens from a 4-token prompt for 2 rows, seeded in
    a user function; returns the tokens and the mean acceptance."""
    import torch
    from speculative_decoding import Decoder, speculative_decoding

    torch.manual_seed(0)
    cfg = dict(num_tokens=32, dim=16, heads=2, dim_head=8)
    net, small = Decoder(depth=2, **cfg).eval(), Decoder(depth=1, **cfg).eval()

    def decode(prompt):
        torch.manual_seed(3)
        return speculative_decoding(net, small, prompt, 12, gamma=3, filter_thres=0.8)
    g = torch.Generator().manual_seed(1)
    return {**cfg, "depth": "2 (small 1)", "seq_len": 12, "gamma": 3}, decode, \
        {"prompt": torch.randint(0, 32, (2, 4), generator=g)}


def _specdec_prophet():
    """speculative-decoding's ModelWithProphetWrapper (a main Decoder of depth 2 and a prophet
    Decoder of depth 1 that drafts from the main model's cached embedding as its start token; 32
    tokens, dim 16, 2 heads of 8) and `speculative_decoding_with_prophet_model` (gamma=2, the same
    accept/reject and cache realignment loop) to 10 tokens from a 4-token prompt for 2 rows, seeded
    in a user function."""
    import torch
    from speculative_decoding.speculative_decoding_with_prophet import (
        Decoder, ModelWithProphetWrapper, speculative_decoding_with_prophet_model)

    torch.manual_seed(0)
    cfg = dict(num_tokens=32, dim=16, heads=2, dim_head=8)
    net = ModelWithProphetWrapper(Decoder(depth=2, **cfg), Decoder(depth=1, **cfg), prophet_train_length=4).eval()

    def decode(prompt):
        torch.manual_seed(3)
        return speculative_decoding_with_prophet_model(net, prompt, 10, gamma=2, filter_thres=0.8)
    g = torch.Generator().manual_seed(1)
    return {**cfg, "depth": "2 (prophet 1)", "seq_len": 10, "gamma": 2}, decode, \
        {"prompt": torch.randint(0, 32, (2, 4), generator=g)}


# --------------------------------------------------------------------------------------------------
# round 19


def _effnet_eval():
    """efficientnet-pytorch's EfficientNet.from_name('efficientnet-b0') shrunk (width 0.25, depth 0.1:
    one MBConv block per stage, squeeze-and-excitation, 10 classes) with no image size, so every
    convolution pads 'same' from the input's size at run time (Conv2dDynamicSamePadding); eval forward
    of 2 images of 3x40x40 and `extract_endpoints` in a user function."""
    import torch
    from efficientnet_pytorch import EfficientNet

    torch.manual_seed(0)
    cfg = dict(width_coefficient=0.25, depth_coefficient=0.1, image_size=None, num_classes=10, dropout_rate=0.2)
    model = EfficientNet.from_name("efficientnet-b0", **cfg).eval()

    def classify(images):
        endpoints = model.extract_endpoints(images)
        return model(images), endpoints["reduction_3"], endpoints["reduction_6"]
    g = torch.Generator().manual_seed(1)
    return {"model": "efficientnet-b0", **cfg}, classify, {"images": torch.randn(2, 3, 40, 40, generator=g)}


def _effnet_train():
    """EfficientNet-b0 shrunk (width 0.25, depth 0.2, image size 32: static 'same' padding, drop
    connect 0.3 on the skip connections, the memory-efficient swish as a custom autograd Function):
    a training step (training mode: batch norm statistics, dropout and drop connect drawn) on cross
    entropy for 4 images of 3x32x32, seeded in the user's loss."""
    import torch
    from efficientnet_pytorch import EfficientNet

    torch.manual_seed(0)
    cfg = dict(width_coefficient=0.25, depth_coefficient=0.2, image_size=32, num_classes=5, dropout_rate=0.2,
               drop_connect_rate=0.3)
    model = EfficientNet.from_name("efficientnet-b0", **cfg)

    def loss_fn(m, images, labels):
        torch.manual_seed(3)
        return torch.nn.functional.cross_entropy(m(images), labels)
    g = torch.Generator().manual_seed(1)
    return {"model": "efficientnet-b0", **cfg}, _TrainStep(model, loss_fn), \
        {"images": torch.randn(4, 3, 32, 32, generator=g), "labels": torch.randint(0, 5, (4,), generator=g)}


def _snn_leaky_train():
    """snntorch's tutorial network: Linear, Leaky (beta 0.9, fast-sigmoid surrogate gradient), Linear,
    Leaky, with the membranes from `init_leaky()` and the spikes recorded over 8 time steps of
    rate-coded input (`spikegen.rate`, Bernoulli draws); a training step on `ce_rate_loss` (the
    spike counts' cross entropy), seeded in the user's loss."""
    import torch
    import snntorch as snn
    from snntorch import functional as SF, spikegen, surrogate

    torch.manual_seed(0)
    cfg = dict(inputs=20, hidden=16, outputs=4, beta=0.9, num_steps=8, slope=25)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            grad = surrogate.fast_sigmoid(slope=cfg["slope"])
            self.fc1 = torch.nn.Linear(cfg["inputs"], cfg["hidden"])
            self.lif1 = snn.Leaky(beta=cfg["beta"], spike_grad=grad)
            self.fc2 = torch.nn.Linear(cfg["hidden"], cfg["outputs"])
            self.lif2 = snn.Leaky(beta=cfg["beta"], spike_grad=grad)

        def forward(self, x):
            mem1, mem2 = self.lif1.init_leaky(), self.lif2.init_leaky()
            spk2_rec, mem2_rec = [], []
            for step in range(cfg["num_steps"]):
                spk1, mem1 = self.lif1(self.fc1(x[step]), mem1)
                spk2, mem2 = self.lif2(self.fc2(spk1), mem2)
                spk2_rec.append(spk2)
                mem2_rec.append(mem2)
            return torch.stack(spk2_rec), torch.stack(mem2_rec)

    loss = SF.ce_rate_loss()

    def loss_fn(m, data, targets):
        torch.manual_seed(3)
        spk, _ = m(spikegen.rate(data, num_steps=cfg["num_steps"]))
        return loss(spk, targets)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(Net(), loss_fn), \
        {"data": torch.rand(3, cfg["inputs"], generator=g), "targets": torch.randint(0, 4, (3,), generator=g)}


def _snn_conv_sequential():
    """A convolutional spiking network as snntorch's tutorials build it: nn.Sequential of Conv2d,
    MaxPool2d, Leaky (init_hidden), Conv2d, MaxPool2d, Leaky, Flatten, Linear, Leaky (init_hidden,
    output): `utils.reset(net)`, then 6 time steps of the same 2x1x12x12 frames, the spikes and
    membranes recorded, eval forward in a user function."""
    import torch
    import snntorch as snn
    from snntorch import surrogate, utils

    torch.manual_seed(0)
    cfg = dict(beta=0.5, num_steps=6, channels=(4, 8), slope=25)
    grad = surrogate.atan()
    net = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3), torch.nn.MaxPool2d(2),
        snn.Leaky(beta=0.5, spike_grad=grad, init_hidden=True),
        torch.nn.Conv2d(4, 8, 3), torch.nn.MaxPool2d(2),
        snn.Leaky(beta=0.5, spike_grad=grad, init_hidden=True),
        torch.nn.Flatten(), torch.nn.Linear(8 * 1 * 1, 3),
        snn.Leaky(beta=0.5, spike_grad=grad, init_hidden=True, output=True)).eval()

    def run(frames):
        utils.reset(net)
        spk_rec, mem_rec = [], []
        for _ in range(cfg["num_steps"]):
            spk, mem = net(frames)
            spk_rec.append(spk)
            mem_rec.append(mem)
        return torch.stack(spk_rec), torch.stack(mem_rec)
    g = torch.Generator().manual_seed(1)
    return cfg, run, {"frames": 3 * torch.rand(2, 1, 12, 12, generator=g)}


def _esm_batch(seqs):
    """ESM's batch converter over (label, sequence) pairs: the token ids, padded."""
    import esm

    alphabet = esm.Alphabet.from_architecture("ESM-1b")
    _, _, tokens = alphabet.get_batch_converter()(seqs)
    return alphabet, tokens


def _esm2_contacts():
    """fair-esm's ESM2 (2 layers, dim 32, 2 heads, the ESM-1b alphabet, token dropout, rotary
    embeddings, the contact head's logistic regression over symmetrised attentions): eval forward of
    3 protein sequences of 12, 9 and 6 residues batched (padded) by the alphabet's batch converter,
    with the representations of layers 0 and 2 and the contacts, in a user function."""
    import torch
    from esm.model.esm2 import ESM2

    torch.manual_seed(0)
    alphabet, tokens = _esm_batch([("a", "MKTAYIAKQRQI"), ("b", "KALTARQQE"), ("c", "VLSPAD")])
    cfg = dict(num_layers=2, embed_dim=32, attention_heads=2, token_dropout=True)
    model = ESM2(alphabet=alphabet, **cfg).eval()

    def embed(tokens):
        out = model(tokens, repr_layers=[0, 2], return_contacts=True)
        return out["logits"], out["representations"][2], out["contacts"]
    return {**cfg, "alphabet": "ESM-1b"}, embed, {"tokens": tokens}


def _esm2_mlm_train():
    """ESM2 (2 layers, dim 32, 2 heads, token dropout) as a masked language model: a training step on
    the cross entropy of 3 positions replaced by the mask token, 2 unpadded sequences of 10 residues
    (training mode)."""
    import torch
    from esm.model.esm2 import ESM2

    torch.manual_seed(0)
    alphabet, tokens = _esm_batch([("a", "MKTAYIAKQR"), ("b", "KALTARQQEV")])
    cfg = dict(num_layers=2, embed_dim=32, attention_heads=2, token_dropout=True)
    model = ESM2(alphabet=alphabet, **cfg)
    masked = tokens.clone()
    where = torch.zeros_like(tokens, dtype=torch.bool)
    where[0, 3] = where[1, 5] = where[1, 8] = True
    masked[where] = alphabet.mask_idx
    labels = torch.where(where, tokens, torch.full_like(tokens, -100))

    def loss_fn(m, tokens, labels):
        logits = m(tokens)["logits"]
        return torch.nn.functional.cross_entropy(logits.transpose(1, 2), labels, ignore_index=-100)
    return {**cfg, "alphabet": "ESM-1b", "masked": 3}, _TrainStep(model, loss_fn), \
        {"tokens": masked, "labels": labels}


def _pfrl_transitions(n, obs_dim, n_actions, seed=1):
    """n one-step transitions as pfrl's replay buffer samples them (numpy observations)."""
    import numpy as np

    rng = np.random.RandomState(seed)
    return [[{"state": rng.randn(obs_dim).astype(np.float32), "action": int(rng.randint(n_actions)),
              "reward": float(rng.randn()), "next_state": rng.randn(obs_dim).astype(np.float32),
              "next_action": None, "is_state_terminal": bool(rng.rand() < 0.2)}] for _ in range(n)]


def _pfrl_double_dqn_update():
    """pfrl's DoubleDQN (an MLP Q-function with a DiscreteActionValueHead: 4 observations, 3 actions,
    Adam, Huber loss, gamma 0.9, `max_grad_norm` 1) and `agent.update(experiences)`, the learner's
    step: batching 8 sampled transitions (numpy observations), the double-Q target from the target
    network, the loss, its statistics records, clipping, the optimizer step, in a user function."""
    import torch
    import pfrl

    torch.manual_seed(0)
    cfg = dict(obs=4, actions=3, hidden=16, gamma=0.9, batch=8)
    q = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3),
                            pfrl.q_functions.DiscreteActionValueHead())
    agent = pfrl.agents.DoubleDQN(
        q, torch.optim.Adam(q.parameters(), lr=1e-2), pfrl.replay_buffers.ReplayBuffer(100), cfg["gamma"],
        pfrl.explorers.ConstantEpsilonGreedy(0.1, lambda: 0), replay_start_size=8, minibatch_size=8,
        target_update_interval=100, max_grad_norm=1.0)

    def update(experiences):
        agent.update(experiences)
        return {n: p.detach().clone() for n, p in q.named_parameters()}
    return cfg, update, {"experiences": _pfrl_transitions(8, 4, 3)}


def _pfrl_categorical_dqn_update():
    """pfrl's CategoricalDQN (C51: a DistributionalFCStateQFunctionWithDiscreteAction over 11 atoms in
    [-2, 2], 4 observations, 3 actions, one hidden layer of 16) and `agent.update(experiences)`:
    the categorical projection of the target distribution (floor/ceil, `scatter_add_`), the cross
    entropy loss and the optimizer step on 8 sampled transitions, in a user function."""
    import torch
    import pfrl

    torch.manual_seed(0)
    cfg = dict(obs=4, actions=3, atoms=11, v_min=-2.0, v_max=2.0, hidden=16, gamma=0.9, batch=8)
    q = pfrl.q_functions.DistributionalFCStateQFunctionWithDiscreteAction(
        4, 3, 11, -2.0, 2.0, n_hidden_channels=16, n_hidden_layers=1)
    agent = pfrl.agents.CategoricalDQN(
        q, torch.optim.Adam(q.parameters(), lr=1e-2), pfrl.replay_buffers.ReplayBuffer(100), cfg["gamma"],
        pfrl.explorers.ConstantEpsilonGreedy(0.1, lambda: 0), replay_start_size=8, minibatch_size=8,
        target_update_interval=100)

    def update(experiences):
        agent.update(experiences)
        return {n: p.detach().clone() for n, p in q.named_parameters()}
    return cfg, update, {"experiences": _pfrl_transitions(8, 4, 3, seed=2)}


def _torchlibrosa_specaug_train():
    """torchlibrosa's front end as PANNs use it: Spectrogram (n_fft 64, hop 16, an STFT by conv1d,
    frozen), LogmelFilterBank (8 kHz, 16 mels, log with top_db 80), SpecAugmentation (2 time stripes
    of up to 4 frames, 2 frequency stripes of up to 3 bins, drawn per example) and a user's small
    convolutional classifier: a training step (training mode) on 2 clips of 512 samples, seeded in the
    user's loss."""
    import torch
    from torchlibrosa.augmentation import SpecAugmentation
    from torchlibrosa.stft import LogmelFilterBank, Spectrogram

    torch.manual_seed(0)
    cfg = dict(sr=8000, n_fft=64, hop_length=16, n_mels=16, top_db=80.0, time_drop_width=4, freq_drop_width=3)

    class Tagger(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.spec = Spectrogram(n_fft=64, hop_length=16, win_length=64, freeze_parameters=True)
            self.logmel = LogmelFilterBank(sr=8000, n_fft=64, n_mels=16, fmin=20, fmax=4000, top_db=80.0,
                                           freeze_parameters=True)
            self.aug = SpecAugmentation(time_drop_width=4, time_stripes_num=2, freq_drop_width=3,
                                        freq_stripes_num=2)
            self.bn = torch.nn.BatchNorm2d(16)
            self.conv = torch.nn.Conv2d(1, 4, 3, padding=1)
            self.out = torch.nn.Linear(4, 3)

        def forward(self, wave):
            x = self.logmel(self.spec(wave))  # (batch, 1, frames, mels)
            x = self.bn(x.transpose(1, 3)).transpose(1, 3)
            if self.training:
                x = self.aug(x)
            x = torch.relu(self.conv(x))
            return self.out(x.mean(dim=(2, 3)))

    def loss_fn(m, wave, labels):
        torch.manual_seed(3)
        return torch.nn.functional.cross_entropy(m(wave), labels)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(Tagger(), loss_fn), \
        {"wave": torch.randn(2, 512, generator=g), "labels": torch.tensor([0, 2])}


def _torchlibrosa_istft():
    """torchlibrosa's STFT and ISTFT (n_fft 64, hop 16, Hann window, centred, reflect padding; the
    inverse by conv and overlap-add with a window-sum normalisation it caches by frame count): the
    magnitude and phase of 2 signals of 400 samples, resynthesised to 400 samples, in a user
    function."""
    import torch
    from torchlibrosa.stft import ISTFT, STFT

    torch.manual_seed(0)
    cfg = dict(n_fft=64, hop_length=16, win_length=64, window="hann", center=True, pad_mode="reflect")
    stft, istft = STFT(**cfg, freeze_parameters=True).eval(), ISTFT(**cfg, freeze_parameters=True).eval()

    def resynth(wave):
        real, imag = stft(wave)
        mag = torch.sqrt(real ** 2 + imag ** 2)
        return mag, istft(real, imag, wave.shape[-1])
    g = torch.Generator().manual_seed(1)
    return cfg, resynth, {"wave": torch.randn(2, 400, generator=g)}


def _asteroid_stft_roundtrip():
    """asteroid-filterbanks' Encoder and Decoder of an STFTFB (64 filters, kernel 64, stride 16) with
    the decoder's pseudo-inverse (`make_enc_dec`), `mag` of the complex representation and 4
    Griffin-Lim iterations from that magnitude (random initial phases, a perfect-synthesis Decoder
    built from the encoder), on 2 mono waveforms of 400
    samples given as (batch, time), seeded in a user function."""
    import torch
    from asteroid_filterbanks import make_enc_dec, transforms
    from asteroid_filterbanks.griffin_lim import griffin_lim

    torch.manual_seed(0)
    cfg = dict(fb="stft", n_filters=64, kernel_size=64, stride=16, who_is_pinv="dec", griffin_lim_iters=4)
    enc, dec = make_enc_dec("stft", n_filters=64, kernel_size=64, stride=16, who_is_pinv="dec")

    def roundtrip(wave):
        spec = enc(wave)
        mag = transforms.mag(spec)
        torch.manual_seed(3)
        return dec(spec, length=wave.shape[-1]), mag, griffin_lim(mag, enc, n_iter=4)
    g = torch.Generator().manual_seed(1)
    return cfg, roundtrip, {"wave": torch.randn(2, 400, generator=g)}


def _asteroid_sinc_pcen_train():
    """asteroid-filterbanks' learnable front end: an Encoder of a ParamSincFB (16 band-pass sinc
    filters of 33 taps, stride 8, 8 kHz), `mag` of it as a magnitude spectrogram, a trainable PCEN
    (per-channel smoothing) and a user's linear keyword classifier: a training step on 2 waveforms of 400
    samples with a channel axis (batch, 1, time)."""
    import torch
    from asteroid_filterbanks import Encoder, ParamSincFB, transforms
    from asteroid_filterbanks.pcen import PCEN

    torch.manual_seed(0)
    cfg = dict(n_filters=16, kernel_size=33, stride=8, sample_rate=8000, pcen="PCEN(trainable, per-channel smoothing)")

    class KWS(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = Encoder(ParamSincFB(16, 33, stride=8, sample_rate=8000.0))
            self.pcen = PCEN(n_channels=1, trainable=True, per_channel_smoothing=True)
            self.out = torch.nn.Linear(8, 3)

        def forward(self, wave):
            mag = transforms.mag(self.enc(wave))  # (batch, 8, frames)
            return self.out(self.pcen(mag).mean(dim=-1))

    def loss_fn(m, wave, labels):
        return torch.nn.functional.cross_entropy(m(wave), labels)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(KWS(), loss_fn), \
        {"wave": torch.randn(2, 1, 400, generator=g), "labels": torch.tensor([1, 2])}

# --------------------------------------------------------------------------------------------------
# round 20


def _sb3c_tqc_critic_train():
    """sb3-contrib's TQC (a TQCPolicy, Box(5) -> Box(2): 2 critics of 5 quantiles each, net_arch
    [16]) and a user's critic update as TQC.train writes it: the next actions and log-probabilities
    from the actor, the target critics' quantiles sorted and truncated (the top 2 dropped per net),
    the entropy-regularised target, `quantile_huber_loss` against the current quantiles, a training
    step on the critic."""
    import gymnasium as gym
    import torch
    from sb3_contrib.common.utils import quantile_huber_loss
    from sb3_contrib.tqc.policies import TQCPolicy

    torch.manual_seed(0)
    cfg = dict(obs=5, actions=2, n_quantiles=5, n_critics=2, top_quantiles_to_drop_per_net=2, gamma=0.99,
               ent_coef=0.1, net_arch=[16])
    policy = TQCPolicy(gym.spaces.Box(-1.0, 1.0, (5,)), gym.spaces.Box(-1.0, 1.0, (2,)), lr_schedule=lambda _: 3e-4,
                       net_arch=[16], n_quantiles=5, n_critics=2)
    drop = cfg["top_quantiles_to_drop_per_net"] * cfg["n_critics"]

    def loss_fn(critic, obs, actions, rewards, next_obs, dones):
        with torch.no_grad():
            next_actions, next_log_prob = policy.actor.action_log_prob(next_obs)
            next_quantiles = policy.critic_target(next_obs, next_actions)
            n_target = next_quantiles.shape[1] * next_quantiles.shape[2] - drop
            next_quantiles, _ = torch.sort(next_quantiles.reshape(obs.shape[0], -1))
            next_quantiles = next_quantiles[:, :n_target]
            target = next_quantiles - cfg["ent_coef"] * next_log_prob.reshape(-1, 1)
            target = rewards + (1 - dones) * cfg["gamma"] * target
            target = target.unsqueeze(1)
        current = critic(obs, actions)
        return quantile_huber_loss(current, target, sum_over_quantiles=True)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(policy.critic, loss_fn), {
        "obs": torch.randn(6, 5, generator=g), "actions": torch.rand(6, 2, generator=g) * 2 - 1,
        "rewards": torch.randn(6, 1, generator=g), "next_obs": torch.randn(6, 5, generator=g),
        "dones": (torch.rand(6, 1, generator=g) < 0.3).float()}


def _sb3c_recurrent_ppo_eval():
    """sb3-contrib's RecurrentActorCriticPolicy (Box(4) -> Discrete(3), an LSTM of 8 shared by actor
    and critic, net_arch [16]): `evaluate_actions` over 2 sequences of 3 steps with an episode start
    in the middle (the LSTM state reset per step), as RecurrentPPO's loss calls it, then `predict`'s
    path (`forward`, deterministic) for one step of 2 environments, in a user function."""
    import gymnasium as gym
    import torch
    from sb3_contrib.common.recurrent.type_aliases import RNNStates
    from sb3_contrib.ppo_recurrent.policies import RecurrentActorCriticPolicy

    torch.manual_seed(0)
    cfg = dict(obs=4, actions=3, lstm_hidden_size=8, net_arch=[16], n_envs=2, steps=3)
    policy = RecurrentActorCriticPolicy(gym.spaces.Box(-1.0, 1.0, (4,)), gym.spaces.Discrete(3),
                                        lr_schedule=lambda _: 3e-4, net_arch=[16], lstm_hidden_size=8).eval()

    def evaluate(obs, actions, episode_starts, h, c):
        lstm_states = RNNStates((h, c), (h.clone(), c.clone()))
        values, log_prob, entropy = policy.evaluate_actions(obs, actions, lstm_states, episode_starts)
        act, value, _, states = policy(obs[:2], lstm_states, episode_starts[:2], deterministic=True)
        return values, log_prob, entropy, act, value, states.pi[0]
    g = torch.Generator().manual_seed(1)
    starts = torch.zeros(6)
    starts[0] = starts[1] = starts[4] = 1.0
    return cfg, evaluate, {"obs": torch.randn(6, 4, generator=g), "actions": torch.tensor([0, 2, 1, 1, 0, 2]),
                           "episode_starts": starts, "h": torch.zeros(1, 2, 8), "c": torch.zeros(1, 2, 8)}


def _sb3c_maskable_ppo_loss():
    """sb3-contrib's MaskableActorCriticPolicy (Box(6) -> MultiDiscrete([3, 4]), net_arch [16]) and
    MaskablePPO's clipped surrogate loss in a user's training step: `evaluate_actions` with invalid
    actions masked out, ratio, clipping 0.2, value and entropy terms."""
    import gymnasium as gym
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    torch.manual_seed(0)
    cfg = dict(obs=6, actions="MultiDiscrete([3, 4])", net_arch=[16], clip_range=0.2, ent_coef=0.01,
               vf_coef=0.5)
    policy = MaskableActorCriticPolicy(gym.spaces.Box(-1.0, 1.0, (6,)), gym.spaces.MultiDiscrete([3, 4]),
                                       lr_schedule=lambda _: 3e-4, net_arch=[16])

    def loss_fn(p, obs, actions, action_masks, old_log_prob, advantages, returns):
        values, log_prob, entropy = p.evaluate_actions(obs, actions, action_masks=action_masks)
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        ratio = torch.exp(log_prob - old_log_prob)
        policy_loss = -torch.min(advantages * ratio, advantages * torch.clamp(ratio, 0.8, 1.2)).mean()
        value_loss = torch.nn.functional.mse_loss(returns, values.flatten())
        return policy_loss + cfg["ent_coef"] * -torch.mean(entropy) + cfg["vf_coef"] * value_loss
    g = torch.Generator().manual_seed(1)
    masks = torch.ones(5, 7, dtype=torch.bool)
    masks[0, 1] = masks[2, 4] = masks[3, 6] = masks[4, 0] = False
    return cfg, _TrainStep(policy, loss_fn), {
        "obs": torch.randn(5, 6, generator=g), "actions": torch.tensor([[0, 0], [2, 3], [1, 1], [2, 2], [1, 3]]),
        "action_masks": masks, "old_log_prob": -torch.rand(5, generator=g) - 1,
        "advantages": torch.randn(5, generator=g), "returns": torch.randn(5, generator=g)}


def _struct_crf_tagger_train():
    """torch-struct's LinearChainCRF in a user's tagger (embedding, BiLSTM, a linear emission layer
    plus a learnt transition matrix broadcast into the (batch, N-1, C, C) log-potentials): a training
    step on the negative log-likelihood of gold tags (`to_event` of the tag sequence, `log_prob`) for 3
    sentences of lengths 7, 5 and 4 (`lengths` given)."""
    import torch
    from torch_struct import LinearChainCRF

    torch.manual_seed(0)
    cfg = dict(vocab=30, emb=16, hidden=8, tags=4, lengths=[7, 5, 4])

    class Tagger(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(30, 16)
            self.lstm = torch.nn.LSTM(16, 8, batch_first=True, bidirectional=True)
            self.out = torch.nn.Linear(16, 4)
            self.trans = torch.nn.Parameter(torch.randn(4, 4) * 0.1)

        def forward(self, words, lengths):
            h, _ = self.lstm(self.emb(words))
            emit = self.out(h)[:, 1:]
            potentials = emit.unsqueeze(-1) + self.trans.view(1, 1, 4, 4)
            potentials[:, 0] += self.out(h)[:, 0].unsqueeze(-2)
            return LinearChainCRF(potentials, lengths=lengths)

    def loss_fn(m, words, lengths, tags):
        dist = m(words, lengths)
        gold = LinearChainCRF.struct.to_parts(tags, 4, lengths=lengths).type_as(dist.log_potentials)
        return -dist.log_prob(gold).mean()
    g = torch.Generator().manual_seed(1)
    lengths = torch.tensor([7, 5, 4])
    return cfg, _TrainStep(Tagger(), loss_fn), {"words": torch.randint(0, 30, (3, 7), generator=g),
                                                "lengths": lengths, "tags": torch.randint(0, 4, (3, 7), generator=g)}


def _struct_dependency_parse():
    """torch-struct's DependencyCRF (projective, Eisner's algorithm as a semiring dynamic program) over
    a biaffine scorer's arc scores for 2 sentences of 6 and 4 words (`lengths`): the partition, the
    arc marginals, the best tree (`argmax`) and its entropy, in a user function (grad on: torch-struct
    computes marginals and the argmax by autograd)."""
    import torch
    from torch_struct import DependencyCRF

    torch.manual_seed(0)
    cfg = dict(words=6, dim=8, lengths=[6, 4])
    biaffine = torch.nn.Bilinear(8, 8, 1)

    def parse(h, lengths):
        n = h.shape[1]
        arcs = biaffine(h.unsqueeze(2).expand(-1, -1, n, -1).contiguous(),
                        h.unsqueeze(1).expand(-1, n, -1, -1).contiguous()).squeeze(-1)
        dist = DependencyCRF(arcs, lengths=lengths)
        return dist.partition, dist.marginals, dist.argmax, dist.entropy
    g = torch.Generator().manual_seed(1)
    return cfg, parse, {"h": torch.randn(2, 6, 8, generator=g), "lengths": torch.tensor([6, 4])}


def _torch_dct_compress():
    """torch-dct's orthonormal 2-d DCT as a JPEG-style codec in a user function: 8x8 blocks of 2 images
    of 16x16 (`dct_2d`, norm 'ortho'), the coefficients outside the top-left 4x4 zeroed, `idct_2d`
    back; and the 3-d DCT and inverse of a 4x8x8 volume (`dct_3d`, `idct_3d`, no norm)."""
    import torch
    import torch_dct

    cfg = dict(block=8, keep=4, images="2x16x16", volume="4x8x8")

    def codec(images, volume):
        blocks = images.unfold(1, 8, 8).unfold(2, 8, 8)
        coeffs = torch_dct.dct_2d(blocks, norm="ortho")
        keep = torch.zeros(8, 8)
        keep[:4, :4] = 1.0
        recon = torch_dct.idct_2d(coeffs * keep, norm="ortho")
        images_out = recon.permute(0, 1, 3, 2, 4).reshape(images.shape)
        return images_out, coeffs, torch_dct.idct_3d(torch_dct.dct_3d(volume))
    g = torch.Generator().manual_seed(1)
    return cfg, codec, {"images": torch.randn(2, 16, 16, generator=g), "volume": torch.randn(4, 8, 8, generator=g)}


def _torch_dct_linear_train():
    """torch-dct's LinearDCT (the DCT-II and its inverse as fixed nn.Linear layers, norm 'ortho') in a
    user's spectral filter model: `apply_linear_2d` to 8x8 inputs, a learnt frequency mask, the
    inverse; a training step on the MSE to a target, plus the 1-d `dct`/`idct` of its rows."""
    import torch
    import torch_dct

    torch.manual_seed(0)
    cfg = dict(n=8, norm="ortho")

    class SpectralFilter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.dct = torch_dct.LinearDCT(8, "dct", norm="ortho")
            self.idct = torch_dct.LinearDCT(8, "idct", norm="ortho")
            self.mask = torch.nn.Parameter(torch.ones(8, 8))

        def forward(self, x):
            y = torch_dct.apply_linear_2d(x, self.dct) * self.mask
            return torch_dct.apply_linear_2d(y, self.idct) + torch_dct.idct(torch_dct.dct(x, norm="ortho"))

    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(SpectralFilter(), _mse), {"x": torch.randn(3, 8, 8, generator=g),
                                                     "y": torch.randn(3, 8, 8, generator=g)}


def _tltorch_factorized_train():
    """tensorly-torch's FactorizedLinear (a Tucker-factorised 64 x 48 weight, in_tensorized_features
    (8, 8), out (6, 8), rank 0.5, factorized forward) and a TRL (tensor regression layer, CP rank 4)
    on a TCL (tensor contraction layer) in a user's model: a training step on cross entropy."""
    import numpy as np
    import torch
    import tltorch

    torch.manual_seed(0)
    np.random.seed(0)  # tensorly's decompositions draw from numpy
    cfg = dict(linear="Tucker (8, 8) -> (6, 8), rank 0.5", tcl="(4, 6, 2) -> (3, 3, 2)", trl="CP rank 4 -> 5")

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = tltorch.FactorizedLinear(in_tensorized_features=(8, 8), out_tensorized_features=(6, 8),
                                               factorization="tucker", rank=0.5, implementation="factorized")
            self.tcl = tltorch.TCL(input_shape=(4, 6, 2), rank=(3, 3, 2))
            self.trl = tltorch.TRL(input_shape=(3, 3, 2), output_shape=(5,), factorization="cp", rank=4)

        def forward(self, x):
            h = torch.relu(self.fc(x)).view(-1, 4, 6, 2)
            return self.trl(torch.relu(self.tcl(h)))

    def loss_fn(m, x, y):
        return torch.nn.functional.cross_entropy(m(x), y)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(Net(), loss_fn), {"x": torch.randn(4, 64, generator=g),
                                             "y": torch.randint(0, 5, (4,), generator=g)}


def _tltorch_factorized_conv():
    """tensorly-torch's FactorizedConv (a CP-factorised 3x3 convolution, 4 -> 8 channels, rank 0.5,
    factorized forward) and `FactorizedConv.from_conv` of a user's Conv2d (Tucker, reconstructed), eval,
    in a user function."""
    import numpy as np
    import torch
    import tltorch

    torch.manual_seed(0)
    np.random.seed(0)  # tensorly's decompositions draw from numpy
    cfg = dict(cp="4 -> 8, 3x3, rank 0.5, factorized", tucker="from_conv 8 -> 6, 3x3, rank 0.5, reconstructed")
    conv = tltorch.FactorizedConv(4, 8, kernel_size=3, order=2, factorization="cp", rank=0.5,
                                  implementation="factorized", padding=1)
    conv.reset_parameters()  # the constructor leaves the factors and bias uninitialised (from_conv calls it)
    conv2 = tltorch.FactorizedConv.from_conv(torch.nn.Conv2d(8, 6, 3), rank=0.5, factorization="tucker",
                                             implementation="reconstructed")

    def run(images):
        return conv2(torch.relu(conv(images)))
    g = torch.Generator().manual_seed(1)
    return cfg, run, {"images": torch.randn(2, 4, 10, 10, generator=g)}


def _torch_frame_data(num_rows, stypes, seed=1):
    """A materialised torch_frame FakeDataset (numpy-drawn columns, target 'target'): its TensorFrame,
    column statistics and target."""
    import numpy as np
    import torch_frame
    from torch_frame.datasets import FakeDataset

    np.random.seed(seed)
    ds = FakeDataset(num_rows=num_rows, with_nan=False, stypes=[getattr(torch_frame.stype, s) for s in stypes],
                     create_split=False).materialize()
    return ds.tensor_frame, ds.col_stats


def _torch_frame_fttransformer():
    """pytorch-frame's FTTransformer (channels 16, 2 layers; categorical and numerical columns
    encoded by its stype encoders, a CLS token) on a TensorFrame of 8 rows of a FakeDataset, eval, in
    a user function."""
    import torch
    from torch_frame.nn.models import FTTransformer

    torch.manual_seed(0)
    tf, col_stats = _torch_frame_data(8, ["categorical", "numerical"])
    cfg = dict(channels=16, out_channels=3, num_layers=2, rows=8)
    model = FTTransformer(channels=16, out_channels=3, num_layers=2, col_stats=col_stats,
                          col_names_dict=tf.col_names_dict).eval()

    def predict(tf):
        return model(tf)
    return cfg, predict, {"tf": tf}


def _torch_frame_excelformer_train():
    """pytorch-frame's ExcelFormer (numerical columns only, no mutual-information scores: in
    channels 8, 2 layers, 2 heads) with `mixup_encoded` (hidden mixup: beta-drawn coefficients and a
    shuffle of the rows) in a training step on the mixed-up targets' MSE, 8 rows, training mode."""
    import torch
    from torch_frame.nn.models import ExcelFormer

    torch.manual_seed(0)
    tf, col_stats = _torch_frame_data(8, ["numerical"])
    num_cols = len(tf.col_names_dict[next(iter(tf.col_names_dict))])
    cfg = dict(in_channels=8, out_channels=1, num_cols=num_cols, num_layers=2, num_heads=2, mixup="hidden")
    model = ExcelFormer(in_channels=8, out_channels=1, num_cols=num_cols, num_layers=2, num_heads=2,
                        col_stats=col_stats, col_names_dict=tf.col_names_dict, mixup="hidden")

    def loss_fn(m, tf):
        torch.manual_seed(3)
        out, y = m(tf, mixup_encoded=True)
        return torch.nn.functional.mse_loss(out.view(-1), y.view(-1))
    return cfg, _TrainStep(model, loss_fn), {"tf": tf}


# --------------------------------------------------------------------------------------------------
# round 21: neuraloperator 2.0.0, torchani 2.9.0, pykeen 1.11.1, torch-rechub 0.9.0 and e2cnn 0.2.3,
# code nobody tuned on, measured before anything was changed for it


def _neuralop_tfno_eval():
    """neuraloperator's TFNO (a 2-d Fourier neural operator with Tucker-factorised spectral weights,
    rank 0.5: 6x6 modes, 12 hidden channels, 2 layers, a grid positional embedding, domain padding
    0.25) on 2 fields of 16x16, eval. The spectral contraction goes through tensorly's einsum with
    opt_einsum's 'optimal' path, as neuralop sets it up on import."""
    import torch
    from neuralop.models import TFNO

    torch.manual_seed(0)
    cfg = dict(n_modes=(6, 6), in_channels=1, out_channels=1, hidden_channels=12, n_layers=2,
               factorization="tucker", rank=0.5, domain_padding=0.25)
    model = TFNO(**cfg).eval()
    g = torch.Generator().manual_seed(1)
    return cfg, model, {"x": torch.randn(2, 1, 16, 16, generator=g)}


def _neuralop_fno1d_train():
    """neuraloperator's FNO (1-d: 8 modes, 2 input channels, 12 hidden, 2 layers, dense spectral
    weights) in a training step on its own losses, relative L2 (`LpLoss(d=1, p=2)`) plus the H1
    Sobolev loss (`H1Loss(d=1)`, finite differences), 3 samples of 32 points."""
    import torch
    from neuralop.losses import H1Loss, LpLoss
    from neuralop.models import FNO

    torch.manual_seed(0)
    cfg = dict(n_modes=(8,), in_channels=2, out_channels=1, hidden_channels=12, n_layers=2, losses="LpLoss + H1Loss")
    model = FNO(n_modes=(8,), in_channels=2, out_channels=1, hidden_channels=12, n_layers=2)
    l2, h1 = LpLoss(d=1, p=2), H1Loss(d=1)

    def loss_fn(m, x, y):
        out = m(x)
        return l2(out, y) + h1(out, y)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"x": torch.randn(3, 2, 32, generator=g),
                                             "y": torch.randn(3, 1, 32, generator=g)}


def _torchani_energies_forces():
    """torchani's `simple_ani` (an ANI-style potential for H, C, N, O: AEVs of 8 radial and 4x2
    angular terms, pure-PyTorch AEV strategy, the all-pairs neighbour list, atomic networks, GSAE
    self energies and the xTB repulsion) and `torchani.grad.energies_and_forces` (forces by
    autograd) on a padded batch of 2 molecules (methane; water padded with -1), in a user function
    (grad on)."""
    import torch
    import torchani
    from torchani.arch import simple_ani

    torch.manual_seed(0)
    cfg = dict(symbols=("H", "C", "N", "O"), lot="wb97x-631gd", strategy="pyaev", neighborlist="all_pairs",
               radial_shifts=8, angular_shifts=4, sections=2, repulsion=True)
    model = simple_ani(("H", "C", "N", "O"), "wb97x-631gd", strategy="pyaev", neighborlist="all_pairs",
                       radial_shifts=8, angular_shifts=4, sections=2)

    def run(species, coordinates):
        return torchani.grad.energies_and_forces(model, species, coordinates)
    g = torch.Generator().manual_seed(1)
    return cfg, run, {"species": torch.tensor([[6, 1, 1, 1, 1], [8, 1, 1, -1, -1]]),
                      "coordinates": torch.randn(2, 5, 3, generator=g) * 1.2}


def _torchani_ensemble_train():
    """torchani's `simple_ani` as an ensemble of 2 (H, C, O; cosine cutoff, no repulsion) in a user's
    training step as torchani's tutorial writes it: energies of a padded batch of 3 molecules, the
    MSE scaled by the square root of the atom count, backward, SGD."""
    import torch
    from torchani.arch import simple_ani

    torch.manual_seed(0)
    cfg = dict(symbols=("H", "C", "O"), lot="wb97x-631gd", ensemble_size=2, cutoff_fn="cosine", repulsion=False,
               radial_shifts=8, angular_shifts=4, sections=2)
    model = simple_ani(("H", "C", "O"), "wb97x-631gd", strategy="pyaev", neighborlist="all_pairs", repulsion=False,
                       radial_shifts=8, angular_shifts=4, sections=2, cutoff_fn="cosine", ensemble_size=2)

    def loss_fn(m, species, coordinates, energies):
        num_atoms = (species >= 0).sum(dim=1, dtype=coordinates.dtype)
        pred = m((species, coordinates)).energies
        return (torch.nn.functional.mse_loss(pred, energies, reduction="none") / num_atoms.sqrt()).mean()
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {
        "species": torch.tensor([[6, 1, 1, 1, 1], [8, 1, 1, -1, -1], [6, 8, 1, 1, -1]]),
        "coordinates": torch.randn(3, 5, 3, generator=g) * 1.2, "energies": torch.randn(3, generator=g)}


def _pykeen_triples(inverse=False):
    """A pykeen CoreTriplesFactory over 40 random triples of 20 entities and 4 relations, and the
    triples."""
    import torch
    from pykeen.triples import CoreTriplesFactory

    g = torch.Generator().manual_seed(1)
    triples = torch.stack([torch.randint(0, 20, (40,), generator=g), torch.randint(0, 4, (40,), generator=g),
                           torch.randint(0, 20, (40,), generator=g)], 1)
    return CoreTriplesFactory.create(mapped_triples=triples, num_entities=20, num_relations=4,
                                     create_inverse_triples=inverse), triples


def _pykeen_gnn_score():
    """pykeen's RGCN (2 layers, basis decomposition, inverse-in-degree edge weighting, DistMult
    decoder) and CompGCN (1 layer, inverse triples, composition by multiplication) on a knowledge
    graph of 40 random triples: `score_hrt` of 6 triples, RGCN's `score_t` and CompGCN's `predict_t`
    over all tails for 3 (head, relation) pairs, eval, in a user function."""
    import torch
    from pykeen.models import RGCN, CompGCN

    torch.manual_seed(0)
    cfg = dict(entities=20, relations=4, triples=40, embedding_dim=8, rgcn_layers=2, compgcn_layers=1)
    tf, triples = _pykeen_triples()
    tf_inv, _ = _pykeen_triples(inverse=True)
    rgcn = RGCN(triples_factory=tf, embedding_dim=8, num_layers=2, random_seed=0).eval()
    comp = CompGCN(triples_factory=tf_inv, embedding_dim=8, encoder_kwargs=dict(num_layers=1), random_seed=0).eval()

    def score(hrt, hr):
        return rgcn.score_hrt(hrt), rgcn.score_t(hr), comp.score_hrt(hrt), comp.predict_t(hr)
    return cfg, score, {"hrt": triples[:6], "hr": triples[6:9, :2]}


def _pykeen_transe_slcwa_train():
    """pykeen's TransE (dim 8, its default margin ranking loss and entity normalisation constraint)
    in a user's sLCWA training step as pykeen's SLCWATrainingLoop does it: `BasicNegativeSampler`
    (3 corrupted triples per positive, filtered), `score_hrt` of positives and negatives,
    `loss.process_slcwa_scores` plus the regularisation term, backward, SGD, then
    `post_parameter_update` (the constrainer)."""
    import torch
    from pykeen.models import TransE
    from pykeen.sampling import BasicNegativeSampler

    torch.manual_seed(0)
    cfg = dict(entities=20, relations=4, triples=40, embedding_dim=8, num_negs_per_pos=3, batch=8)
    tf, triples = _pykeen_triples()
    model = TransE(triples_factory=tf, embedding_dim=8, random_seed=0)
    sampler = BasicNegativeSampler(mapped_triples=triples, num_negs_per_pos=3)

    def loss_fn(m, pos):
        torch.manual_seed(3)
        neg, mask = sampler.sample(pos)
        pos_scores = m.score_hrt(pos)
        neg_scores = m.score_hrt(neg.view(-1, 3)).view(*neg.shape[:-1])
        return m.loss.process_slcwa_scores(pos_scores, neg_scores, batch_filter=mask) + m.collect_regularization_term()
    step = _TrainStep(model, loss_fn)

    def train(pos):
        out = step(pos=pos)
        model.post_parameter_update()
        return out
    return cfg, train, {"pos": triples[:8]}


def _rechub_din_eval():
    """torch-rechub's DIN (deep interest network: target attention of a padded item history, shared
    with the target item's embedding, through ActivationUnit MLPs with Dice, then an MLP with Dice)
    on 4 users with 2 sparse profile features, eval, in a user function."""
    import torch
    from torch_rechub.basic.features import SequenceFeature, SparseFeature
    from torch_rechub.models.ranking import DIN

    torch.manual_seed(0)
    cfg = dict(users=20, items=30, cates=6, embed_dim=8, history=6, mlp=[16, 8], attention_mlp=[16])
    features = [SparseFeature("user_id", 20, embed_dim=8), SparseFeature("cate", 6, embed_dim=8)]
    history = [SequenceFeature("hist_item", 30, embed_dim=8, pooling="concat", shared_with="target_item",
                               padding_idx=0)]
    target = [SparseFeature("target_item", 30, embed_dim=8)]
    model = DIN(features, history, target, mlp_params={"dims": [16, 8]}, attention_mlp_params={"dims": [16]}).eval()

    def predict(x):
        return model(x)
    g = torch.Generator().manual_seed(1)
    hist = torch.randint(1, 30, (4, 6), generator=g)
    hist[0, 4:] = 0
    hist[2, 3:] = 0
    return cfg, predict, {"x": {"user_id": torch.randint(0, 20, (4,), generator=g),
                                "cate": torch.randint(0, 6, (4,), generator=g), "hist_item": hist,
                                "target_item": torch.randint(1, 30, (4,), generator=g)}}


def _rechub_dien_train():
    """torch-rechub's DIEN (interest extractor GRU over packed padded histories, auxiliary loss on
    negative histories, AUGRU interest evolution, an MLP with Dice) in a training step on the click
    BCE plus its auxiliary loss, 4 users (one with an empty history), training mode."""
    import torch
    from torch_rechub.basic.features import DenseFeature, SequenceFeature, SparseFeature
    from torch_rechub.models.ranking import DIEN

    torch.manual_seed(0)
    cfg = dict(users=20, items=30, embed_dim=8, history=6, mlp=[16, 8], alpha=0.2)
    features = [SparseFeature("user_id", 20, embed_dim=8), DenseFeature("age")]
    history = [SequenceFeature("hist_item", 30, embed_dim=8, pooling="concat", shared_with="target_item",
                               padding_idx=0)]
    neg = [SequenceFeature("neg_hist_item", 30, embed_dim=8, pooling="concat", shared_with="target_item",
                           padding_idx=0)]
    target = [SparseFeature("target_item", 30, embed_dim=8)]
    model = DIEN(features, history, neg, target, mlp_params={"dims": [16, 8]})

    def loss_fn(m, x, y):
        p, aux = m(x)
        return torch.nn.functional.binary_cross_entropy(p, y) + aux
    g = torch.Generator().manual_seed(1)
    hist = torch.randint(1, 30, (4, 6), generator=g)
    hist[0, 4:] = 0
    hist[2, 2:] = 0
    hist[3, :] = 0
    x = {"user_id": torch.randint(0, 20, (4,), generator=g), "age": torch.rand(4, generator=g), "hist_item": hist,
         "neg_hist_item": torch.randint(1, 30, (4, 6), generator=g) * (hist > 0),
         "target_item": torch.randint(1, 30, (4,), generator=g)}
    return cfg, _TrainStep(model, loss_fn), {"x": x, "y": (torch.rand(4, generator=g) < 0.5).float()}


def _e2cnn_c8_eval():
    """e2cnn's C8-steerable CNN (Rot2dOnR2(N=8): R2Conv 1 -> 4 regular fields, InnerBatchNorm, ReLU,
    PointwiseMaxPool, R2Conv to 4 regular fields, ReLU, GroupPooling) on 2 images of 16x16 wrapped
    in a GeometricTensor, eval, in a user function."""
    import torch
    from e2cnn import gspaces
    from e2cnn import nn as enn

    torch.manual_seed(0)
    cfg = dict(group="C8", fields="trivial -> 4 regular -> 4 regular -> group pooling", kernel=(5, 3))
    r2 = gspaces.Rot2dOnR2(N=8)
    tin = enn.FieldType(r2, [r2.trivial_repr])
    t1 = enn.FieldType(r2, 4 * [r2.regular_repr])
    t2 = enn.FieldType(r2, 4 * [r2.regular_repr])
    net = enn.SequentialModule(enn.R2Conv(tin, t1, kernel_size=5, padding=2), enn.InnerBatchNorm(t1), enn.ReLU(t1),
                               enn.PointwiseMaxPool(t1, 2), enn.R2Conv(t1, t2, kernel_size=3, padding=1),
                               enn.ReLU(t2), enn.GroupPooling(t2)).eval()

    def run(x):
        return net(enn.GeometricTensor(x, tin)).tensor
    g = torch.Generator().manual_seed(1)
    return cfg, run, {"x": torch.randn(2, 1, 16, 16, generator=g)}


def _e2cnn_c4_train():
    """e2cnn's C4-steerable CNN in training mode (R2Conv expanding its filter basis every call,
    InnerBatchNorm with batch statistics, ELU, PointwiseDropout, antialiased average pooling, a
    second R2Conv, GroupPooling) with a linear head on the pooled invariant features: a training
    step on cross entropy, 2 RGB images of 12x12."""
    import torch
    from e2cnn import gspaces
    from e2cnn import nn as enn

    torch.manual_seed(0)
    cfg = dict(group="C4", fields="3 trivial -> 3 regular -> 4 regular -> group pooling", dropout=0.1, classes=3)
    r2 = gspaces.Rot2dOnR2(N=4)
    tin = enn.FieldType(r2, 3 * [r2.trivial_repr])
    t1 = enn.FieldType(r2, 3 * [r2.regular_repr])
    t2 = enn.FieldType(r2, 4 * [r2.regular_repr])

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = enn.SequentialModule(
                enn.R2Conv(tin, t1, kernel_size=5, padding=2), enn.InnerBatchNorm(t1), enn.ELU(t1),
                enn.PointwiseDropout(t1, p=0.1), enn.PointwiseAvgPoolAntialiased(t1, sigma=0.66, stride=2),
                enn.R2Conv(t1, t2, kernel_size=3, padding=1), enn.InnerBatchNorm(t2), enn.ReLU(t2),
                enn.GroupPooling(t2))
            self.head = torch.nn.Linear(4, 3)

        def forward(self, x):
            h = self.body(enn.GeometricTensor(x, tin)).tensor
            return self.head(h.mean(dim=(2, 3)))

    def loss_fn(m, x, y):
        torch.manual_seed(3)  # the dropout mask
        return torch.nn.functional.cross_entropy(m(x), y)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(Net(), loss_fn), {"x": torch.randn(2, 3, 12, 12, generator=g), "y": torch.tensor([0, 2])}


# round 22: skorch 1.4.0, pytorch-ignite 0.5.5, roma 1.8.0, schedulefree 1.4.1 and torch-harmonics
# 0.8.0, code nobody tuned on, measured before anything was changed for it


def _params_of(model):
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def _skorch_classifier_train_step():
    """skorch's NeuralNetClassifier around a user's MLP (softmax output, skorch's default NLLLoss on
    the log of the probabilities, SGD with momentum, a GradientNormClipping callback, no train
    split), initialized, then `net.train_step((X, y))` as skorch's fit loop calls it for a batch:
    the step closure, zero_grad, train_step_single (infer, get_loss, backward), the
    on_grad_computed notification, optimizer.step, the step accumulator; 8 samples of 6
    features, 3 classes."""
    import torch
    from skorch import NeuralNetClassifier
    from skorch.callbacks import GradientNormClipping

    class MLP(torch.nn.Module):
        def __init__(self, hidden=16):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(6, hidden), torch.nn.ReLU(), torch.nn.Dropout(0.0),
                                           torch.nn.Linear(hidden, 3))

        def forward(self, X):
            return torch.softmax(self.net(X), dim=-1)

    torch.manual_seed(0)
    cfg = dict(features=6, classes=3, hidden=16, batch=8, optimizer="SGD", lr=0.05, momentum=0.9, clip=1.0)
    net = NeuralNetClassifier(MLP, module__hidden=16, optimizer=torch.optim.SGD, lr=0.05,
                              optimizer__momentum=0.9, train_split=None, max_epochs=1, verbose=0,
                              callbacks=[("clip", GradientNormClipping(gradient_clip_value=1.0))])
    net.initialize()

    def step(X, y):
        out = net.train_step((X, y))
        return {"loss": out["loss"].detach(), "y_pred": out["y_pred"].detach(), **_params_of(net.module_)}
    g = torch.Generator().manual_seed(1)
    return cfg, step, {"X": torch.randn(8, 6, generator=g), "y": torch.randint(0, 3, (8,), generator=g)}


def _skorch_binary_validation():
    """skorch's NeuralNetBinaryClassifier (BCEWithLogitsLoss, threshold 0.5) around a user's module
    taking a dict of inputs (features and a padding mask, passed as keyword arguments by skorch's
    `infer`), initialized, then a user's validation: `net.validation_step((X, y))` (eval mode,
    no_grad, infer, get_loss) and `net.evaluation_step((X, y))`, with the predicted labels by the
    net's threshold; 6 samples of 5 steps of 4 features."""
    import torch
    from skorch import NeuralNetBinaryClassifier

    class Pooler(torch.nn.Module):
        def __init__(self, hidden=8):
            super().__init__()
            self.proj = torch.nn.Linear(4, hidden)
            self.out = torch.nn.Linear(hidden, 1)

        def forward(self, x, mask):
            h = torch.tanh(self.proj(x)) * mask.unsqueeze(-1)
            return self.out(h.sum(1) / mask.sum(1, keepdim=True).clamp(min=1)).squeeze(-1)

    torch.manual_seed(0)
    cfg = dict(samples=6, steps=5, features=4, hidden=8, threshold=0.5)
    net = NeuralNetBinaryClassifier(Pooler, module__hidden=8, train_split=None, max_epochs=1, verbose=0)
    net.initialize()

    def validate(x, mask, y):
        X = {"x": x, "mask": mask}
        val = net.validation_step((X, y))
        logits = net.evaluation_step((X, y))
        proba = torch.sigmoid(logits)
        return val["loss"], val["y_pred"], proba, (proba > net.threshold).long()
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(6, 5)
    mask[1, 3:] = 0
    mask[4, 2:] = 0
    return cfg, validate, {"x": torch.randn(6, 5, 4, generator=g), "mask": mask,
                           "y": torch.randint(0, 2, (6,), generator=g).float()}


def _ignite_supervised_step():
    """pytorch-ignite's `supervised_training_step` (gradient accumulation over 2 iterations, the
    default `_prepare_batch` and its `loss.item()` output transform) around a user's CNN with
    Adam and cross entropy, called on an Engine built on it as ignite's trainer calls its process
    function, for iterations 1 and 2 (zero_grad on the first, step on the second); 4 images of
    1x8x8, 5 classes."""
    import torch
    from ignite.engine import Engine, supervised_training_step

    torch.manual_seed(0)
    cfg = dict(images=(4, 1, 8, 8), classes=5, channels=4, optimizer="Adam", lr=1e-2, gradient_accumulation_steps=2)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                torch.nn.Flatten(), torch.nn.Linear(4 * 4 * 4, 5))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    update = supervised_training_step(model, opt, torch.nn.functional.cross_entropy, gradient_accumulation_steps=2)
    trainer = Engine(update)

    def step(x, y):
        losses = []
        for it in (1, 2):
            trainer.state.iteration = it
            losses.append(update(trainer, (x[2 * (it - 1):2 * it], y[2 * (it - 1):2 * it])))
        return losses, _params_of(model)
    g = torch.Generator().manual_seed(1)
    return cfg, step, {"x": torch.randn(4, 1, 8, 8, generator=g), "y": torch.randint(0, 5, (4,), generator=g)}


def _ignite_metrics():
    """pytorch-ignite metrics as a user's validation step uses them, reset, updated with two
    batches and computed: Accuracy, Precision and Recall (macro-averaged and per class),
    Fbeta(1), TopKCategoricalAccuracy(2), ConfusionMatrix with IoU and mIoU on top of it, Loss
    (cross entropy) and MeanSquaredError of the probabilities against one-hot targets; 2 batches
    of 6 samples, 4 classes."""
    import torch
    import torch.nn.functional as F
    from ignite.metrics import (IoU, Accuracy, ConfusionMatrix, Fbeta, Loss, MeanSquaredError, Precision, Recall,
                                TopKCategoricalAccuracy, mIoU)

    cfg = dict(batches=2, batch=6, classes=4)
    cm = ConfusionMatrix(num_classes=4)
    metrics = {"acc": Accuracy(), "prec": Precision(average=True), "prec_per_class": Precision(average=False),
               "rec": Recall(average=True), "f1": Fbeta(1.0), "top2": TopKCategoricalAccuracy(k=2),
               "loss": Loss(F.cross_entropy), "mse": MeanSquaredError(), "iou": IoU(cm), "miou": mIoU(cm)}

    def validate(logits, y):
        for m in metrics.values():
            m.reset()
        cm.reset()
        for i in range(2):
            yp, yt = logits[6 * i:6 * (i + 1)], y[6 * i:6 * (i + 1)]
            for name, m in metrics.items():
                if name == "mse":
                    m.update((torch.softmax(yp, -1), F.one_hot(yt, 4).float()))
                elif name not in ("iou", "miou"):
                    m.update((yp, yt))
            cm.update((yp, yt))
        return {name: m.compute() for name, m in metrics.items()}
    g = torch.Generator().manual_seed(1)
    return cfg, validate, {"logits": torch.randn(12, 4, generator=g), "y": torch.randint(0, 4, (12,), generator=g)}


def _roma_rotations():
    """roma's rotation toolbox in a user's pose post-processing: rotation vectors to matrices and
    unit quaternions, the special Procrustes projection (SVD) and Gram-Schmidt of noisy 3x3
    matrices, quaternion products and inverse, slerp at 3 steps, Euler angles ('xyz') both ways,
    geodesic distances, and a RigidUnitQuat composed with its inverse and applied to points; a
    batch of 4."""
    import torch
    import roma

    cfg = dict(batch=4, slerp_steps=3, euler="xyz", points=5)

    def post(rotvec, M, t, pts):
        R = roma.rotvec_to_rotmat(rotvec)
        q = roma.rotmat_to_unitquat(R)
        Rp = roma.special_procrustes(M)
        Rg = roma.special_gramschmidt(M[..., :2])
        qp = roma.rotmat_to_unitquat(Rp)
        qc = roma.quat_product(q, roma.quat_inverse(qp))
        steps = torch.linspace(0, 1, 3)
        qs = roma.unitquat_slerp(q, qp, steps)
        euler = roma.rotmat_to_euler("xyz", Rp)
        Re = roma.euler_to_rotmat("xyz", euler)
        T = roma.RigidUnitQuat(q[:, None], t[:, None])
        moved = (T @ T.inverse()).apply(pts) - T.apply(pts)
        return (roma.unitquat_to_rotvec(qc), qs, Rg, roma.rotmat_geodesic_distance(Rp, Re),
                roma.rotmat_geodesic_distance(R, Rg), roma.unitquat_geodesic_distance(q, qp), moved)
    g = torch.Generator().manual_seed(1)
    return cfg, post, {"rotvec": torch.randn(4, 3, generator=g), "M": torch.randn(4, 3, 3, generator=g),
                       "t": torch.randn(4, 3, generator=g), "pts": torch.randn(4, 5, 3, generator=g)}


def _roma_pose_train():
    """A user's pose regressor (an MLP from 8 features to a 3x3 matrix and a translation) trained
    through roma: `special_procrustes` maps the output to a rotation (the SVD's backward), the
    geodesic distance to a target rotation from `rotvec_to_rotmat` plus the error of
    `Rigid(R, t).apply` on 5 points, a training step (SGD); batch 4."""
    import torch
    import roma

    torch.manual_seed(0)
    cfg = dict(features=8, hidden=16, batch=4, points=5)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 12))

    def loss_fn(m, x, rotvec, t, pts):
        out = m(x)
        R = roma.special_procrustes(out[:, :9].reshape(-1, 3, 3))
        R_true = roma.rotvec_to_rotmat(rotvec)
        pred = roma.Rigid(R[:, None], out[:, None, 9:]).apply(pts)
        true = roma.Rigid(R_true[:, None], t[:, None]).apply(pts)
        return roma.rotmat_geodesic_distance(R, R_true).mean() + (pred - true).square().mean()
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"x": torch.randn(4, 8, generator=g),
                                             "rotvec": torch.randn(4, 3, generator=g),
                                             "t": torch.randn(4, 3, generator=g),
                                             "pts": torch.randn(4, 5, 3, generator=g)}


def _sf_model():
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.LayerNorm(16), torch.nn.GELU(),
                               torch.nn.Linear(16, 1))


def _schedulefree_adamw_train():
    """schedulefree's AdamWScheduleFree (2 warmup steps, weight decay) as its README has users
    train: `optimizer.train()`, three training steps (MSE, backward, `optimizer.step()`), then
    `optimizer.eval()` (parameters swapped to the averaged x) and a prediction; a user's MLP with
    layer norm, batch 8 of 6 features."""
    import torch
    import schedulefree

    cfg = dict(features=6, hidden=16, batch=8, lr=1e-2, warmup_steps=2, weight_decay=1e-3, steps=3)
    model = _sf_model()
    opt = schedulefree.AdamWScheduleFree(model.parameters(), lr=1e-2, warmup_steps=2, weight_decay=1e-3)

    def train(x, y):
        model.train()
        opt.train()
        losses = []
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        model.eval()
        opt.eval()
        return losses, model(x).detach(), _params_of(model)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randn(8, 1, generator=g)}


def _schedulefree_wrapper_sgd():
    """schedulefree's ScheduleFreeWrapper around torch's SGD (no momentum of its own; the wrapper's
    momentum 0.9, weight decay at y) and SGDScheduleFree (1 warmup step) on a second model, each
    switched with `.train()`, two training steps (MSE, backward, step), then `.eval()` and a
    prediction, in a user function; batch 8 of 6 features. (RAdamScheduleFree does not compile:
    its first steps' `weight / weight_sum` of zero, caught eagerly by `except ZeroDivisionError`,
    is a TorchRuntimeError under Dynamo.)"""
    import torch
    import schedulefree

    cfg = dict(features=6, hidden=16, batch=8, wrapper=dict(base="SGD", lr=0.05, momentum=0.9, weight_decay_at_y=1e-3),
               sgd=dict(lr=0.05, warmup_steps=1), steps=2)
    m1, m2 = _sf_model(), _sf_model()
    o1 = schedulefree.ScheduleFreeWrapper(torch.optim.SGD(m1.parameters(), lr=0.05), momentum=0.9,
                                          weight_decay_at_y=1e-3)
    o2 = schedulefree.SGDScheduleFree(m2.parameters(), lr=0.05, warmup_steps=1)

    def train(x, y):
        out = []
        for m, o in ((m1, o1), (m2, o2)):
            m.train()
            o.train()
            for _ in range(2):
                o.zero_grad()
                loss = torch.nn.functional.mse_loss(m(x), y)
                loss.backward()
                o.step()
                out.append(loss.detach())
            o.eval()
            m.eval()
            out.append(m(x).detach())
        return out, _params_of(m1), _params_of(m2)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randn(8, 1, generator=g)}


def _th_sht_disco():
    """torch-harmonics' spherical signal processing in a user function, eval: RealSHT then
    InverseRealSHT (equiangular 12x24, lmax 8) with a low-pass of the coefficients, a DISCO
    convolution on the sphere (DiscreteContinuousConvS2, piecewise-linear basis of kernel shape 3,
    12x24 to 6x12), a transposed one back up, and ResampleS2 to a Legendre-Gauss grid; 2 fields of
    2 channels."""
    import torch
    import torch_harmonics as th

    torch.manual_seed(0)
    cfg = dict(grid=(12, 24), lmax=8, disco=dict(channels=(2, 4), out=(6, 12), kernel_shape=3), resample="legendre-gauss")
    sht = th.RealSHT(12, 24, lmax=8, mmax=8, grid="equiangular")
    isht = th.InverseRealSHT(12, 24, lmax=8, mmax=8, grid="equiangular")
    conv = th.DiscreteContinuousConvS2(2, 4, (12, 24), (6, 12), kernel_shape=3).eval()
    tconv = th.DiscreteContinuousConvTransposeS2(4, 2, (6, 12), (12, 24), kernel_shape=3).eval()
    resample = th.ResampleS2(12, 24, 12, 24, grid_in="equiangular", grid_out="legendre-gauss")
    lowpass = (torch.arange(8) < 5).to(torch.complex64).unsqueeze(-1)

    def process(u):
        coeffs = sht(u)
        smooth = isht(coeffs * lowpass)
        down = conv(u)
        up = tconv(down)
        return smooth, down, up, resample(smooth + up)
    g = torch.Generator().manual_seed(1)
    return cfg, process, {"u": torch.randn(2, 2, 12, 24, generator=g)}


def _th_sfno_train():
    """torch-harmonics' example SphericalFourierNeuralOperator (12x24 equiangular fields, internal
    Legendre-Gauss grid, scale factor 2, embedding 8, 2 layers, MLPs, layer norm) in a training
    step on its examples' `L2LossS2` (quadrature-weighted over the sphere); 2 samples of 3
    channels."""
    import torch
    from torch_harmonics.examples.losses import L2LossS2
    from torch_harmonics.examples.models import SphericalFourierNeuralOperator

    torch.manual_seed(0)
    cfg = dict(img_size=(12, 24), scale_factor=2, in_chans=3, out_chans=3, embed_dim=8, num_layers=2,
               normalization_layer="layer_norm", loss="L2LossS2")
    model = SphericalFourierNeuralOperator(img_size=(12, 24), scale_factor=2, in_chans=3, out_chans=3, embed_dim=8,
                                           num_layers=2, normalization_layer="layer_norm")
    loss = L2LossS2(12, 24)

    def loss_fn(m, x, y):
        return loss(m(x), y)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"x": torch.randn(2, 3, 12, 24, generator=g),
                                             "y": torch.randn(2, 3, 12, 24, generator=g)}


# --------------------------------------------------------------------------------------------------
# round 23: flow-matching 1.0.10, ptwt 1.0.1, torch-pruning 1.6.1, torchsurv 0.2.0 and captum 0.9.0,
# code nobody tuned on, measured before anything was changed for it


def _fm_cfm_train_sample():
    """facebook's flow_matching, continuous: a user's velocity MLP trained one step on an
    AffineProbPath with the CondOT scheduler (`path.sample`, the MSE to the path's `dx_t`, Adam),
    then `ODESolver.sample` (midpoint, step 0.25, intermediates on a 3-point time grid) and
    `ODESolver.compute_likelihood` (Euler from t=1 to 0, the Hutchinson divergence estimator
    through `torch.autograd.grad`, a standard normal source), both through torchdiffeq's odeint;
    8 samples of 2-d, 4 sampled."""
    import math

    import torch
    from flow_matching.path import AffineProbPath
    from flow_matching.path.scheduler import CondOTScheduler
    from flow_matching.solver import ODESolver
    from flow_matching.utils import ModelWrapper

    class Velocity(torch.nn.Module):
        def __init__(self, hidden=32):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(3, hidden), torch.nn.SiLU(), torch.nn.Linear(hidden, 2))

        def forward(self, x, t):
            return self.net(torch.cat([x, t.reshape(-1, 1).expand(x.shape[0], 1)], -1))

    class Wrapped(ModelWrapper):
        def forward(self, x, t, **extras):
            return self.model(x, t)

    torch.manual_seed(0)
    cfg = dict(dim=2, hidden=32, batch=8, scheduler="CondOT", optimizer="Adam", lr=1e-3,
               sample=dict(method="midpoint", step_size=0.25, time_grid=[0.0, 0.5, 1.0]),
               likelihood=dict(method="euler", step_size=0.25, exact_divergence=False))
    model = Velocity()
    path = AffineProbPath(scheduler=CondOTScheduler())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    solver = ODESolver(velocity_model=Wrapped(model))

    def log_p0(x):
        return -0.5 * (x ** 2).sum(-1) - math.log(2 * math.pi)

    def train_and_sample(x_0, x_1, t, x_init):
        torch.manual_seed(3)  # the Hutchinson probe: the same on every call (eager, compiled, mended)
        opt.zero_grad()
        ps = path.sample(t=t, x_0=x_0, x_1=x_1)
        loss = torch.pow(model(ps.x_t, ps.t) - ps.dx_t, 2).mean()
        loss.backward()
        opt.step()
        sol = solver.sample(x_init=x_init, step_size=0.25, method="midpoint", time_grid=torch.tensor([0.0, 0.5, 1.0]),
                            return_intermediates=True)
        x_src, log_p = solver.compute_likelihood(x_1=x_1[:4], log_p0=log_p0, step_size=0.25, method="euler")
        return loss.detach(), sol, x_src, log_p, _params_of(model)
    g = torch.Generator().manual_seed(1)
    return cfg, train_and_sample, {"x_0": torch.randn(8, 2, generator=g), "x_1": torch.randn(8, 2, generator=g) + 2,
                                   "t": torch.rand(8, generator=g), "x_init": torch.randn(4, 2, generator=g)}


def _fm_discrete_train_sample():
    """facebook's flow_matching, discrete: a user's token denoiser (embedding, time, MLP to
    logits over 6 tokens) trained one step on a MixtureDiscreteProbPath with a polynomial
    scheduler (n=2) and its MixturePathGeneralizedKL loss (SGD), then
    `MixtureDiscreteEulerSolver.sample` from the softmax of the denoiser (step 0.25, a
    divergence-free term 0.5 with a uniform source distribution, intermediates on a 3-point time
    grid): its jumps are masked, categorical draws; 8 sequences of 5 tokens, 4 sampled."""
    import torch
    from flow_matching.loss import MixturePathGeneralizedKL
    from flow_matching.path import MixtureDiscreteProbPath
    from flow_matching.path.scheduler import PolynomialConvexScheduler
    from flow_matching.solver import MixtureDiscreteEulerSolver
    from flow_matching.utils import ModelWrapper

    V, L = 6, 5

    class Denoiser(torch.nn.Module):
        def __init__(self, hidden=32):
            super().__init__()
            self.emb = torch.nn.Embedding(V, 16)
            self.net = torch.nn.Sequential(torch.nn.Linear(17, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, V))

        def forward(self, x, t):
            h = self.emb(x)
            return self.net(torch.cat([h, t.reshape(-1, 1, 1).expand(h.shape[0], h.shape[1], 1)], -1))

    class Probs(ModelWrapper):
        def forward(self, x, t, **extras):
            return torch.softmax(self.model(x, t), -1)

    torch.manual_seed(0)
    cfg = dict(vocab=V, length=L, batch=8, scheduler=dict(polynomial_n=2.0), optimizer="SGD", lr=0.1,
               sample=dict(step_size=0.25, div_free=0.5, source="uniform", time_grid=[0.0, 0.5, 1.0]))
    model = Denoiser()
    path = MixtureDiscreteProbPath(scheduler=PolynomialConvexScheduler(n=2.0))
    loss_fn = MixturePathGeneralizedKL(path=path)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    solver = MixtureDiscreteEulerSolver(model=Probs(model), path=path, vocabulary_size=V,
                                        source_distribution_p=torch.full((V,), 1.0 / V))

    def train_and_sample(x_1, t, x_init):
        torch.manual_seed(3)  # the path's and the sampler's draws: the same on every call
        x_0 = torch.randint_like(x_1, V)
        ps = path.sample(t=t, x_0=x_0, x_1=x_1)
        opt.zero_grad()
        loss = loss_fn(logits=model(ps.x_t, ps.t), x_1=x_1, x_t=ps.x_t, t=ps.t)
        loss.backward()
        opt.step()
        samples = solver.sample(x_init=x_init, step_size=0.25, div_free=0.5, time_grid=torch.tensor([0.0, 0.5, 1.0]),
                                return_intermediates=True)
        return loss.detach(), samples, _params_of(model)
    g = torch.Generator().manual_seed(1)
    return cfg, train_and_sample, {"x_1": torch.randint(0, V, (8, L), generator=g), "t": torch.rand(8, generator=g),
                                   "x_init": torch.randint(0, V, (4, L), generator=g)}


def _ptwt_denoise():
    """ptwt (the PyTorch wavelet toolbox) in a user's denoising function: `wavedec` (db4, 3
    levels, reflect padding) of noisy 1-d signals, soft thresholding of the details at the
    universal threshold (median absolute deviation of the finest level), `waverec`; `wavedec2` /
    `waverec2` (haar, 2 levels) of images with the finest details zeroed; the stationary `swt` /
    `iswt` (sym2, 2 levels); a `WaveletPacket` (db2, level 2) read by node; wavelets named by
    string (pywt's); 3 signals of 64 samples, 2 images of 16x16."""
    import math

    import torch
    import ptwt

    cfg = dict(signals=(3, 64), images=(2, 16, 16), wavedec=dict(wavelet="db4", level=3, mode="reflect"),
               wavedec2=dict(wavelet="haar", level=2, mode="zero"), swt=dict(wavelet="sym2", level=2),
               packet=dict(wavelet="db2", maxlevel=2, mode="reflect"))

    def soft(c, thr):
        return torch.sign(c) * torch.clamp(c.abs() - thr, min=0.0)

    def process(sig, img):
        coeffs = ptwt.wavedec(sig, "db4", level=3, mode="reflect")
        sigma = coeffs[-1].abs().median(dim=-1, keepdim=True).values / 0.6745
        thr = sigma * math.sqrt(2 * math.log(sig.shape[-1]))
        den = ptwt.waverec([coeffs[0]] + [soft(c, thr) for c in coeffs[1:]], "db4")
        c2 = ptwt.wavedec2(img, "haar", level=2, mode="zero")
        img_lp = ptwt.waverec2([c2[0], c2[1], tuple(torch.zeros_like(d) for d in c2[2])], "haar")
        sig_sw = ptwt.iswt(ptwt.swt(sig, "sym2", level=2), "sym2")
        wp = ptwt.WaveletPacket(sig, "db2", mode="reflect", maxlevel=2)
        return den, img_lp, sig_sw, torch.stack([wp[k] for k in ("aa", "ad", "da", "dd")], 1)
    g = torch.Generator().manual_seed(1)
    sig = torch.sin(2 * math.pi * 5 * torch.linspace(0, 1, 64)) + 0.3 * torch.randn(3, 64, generator=g)
    return cfg, process, {"sig": sig, "img": torch.randn(2, 16, 16, generator=g)}


def _ptwt_learnable_wavelet_train():
    """ptwt's learnable wavelets: a user's wavelet autoencoder whose filter bank is a
    `SoftOrthogonalWavelet` (initialised from a perturbed db3) passed to `wavedec` / `waverec`
    (3 levels, zero padding) as the wavelet object, with a learned sigmoid gate per detail level;
    the loss is the reconstruction MSE plus the wavelet's `wavelet_loss` (perfect reconstruction,
    alias cancellation, orthogonality), a training step (SGD); 4 signals of 64 samples."""
    import pywt
    import torch
    import ptwt
    from ptwt.wavelets_learnable import SoftOrthogonalWavelet

    torch.manual_seed(0)
    cfg = dict(signals=(4, 64), init="db3", noise=0.01, level=3, mode="zero")
    filt = [torch.tensor(f, dtype=torch.float32) + 0.01 * torch.randn(len(f)) for f in pywt.Wavelet("db3").filter_bank]

    class WaveletAE(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.wavelet = SoftOrthogonalWavelet(*filt)
            self.gate = torch.nn.Parameter(torch.ones(3))

        def forward(self, x):
            coeffs = ptwt.wavedec(x, self.wavelet, level=3, mode="zero")
            kept = [coeffs[0]] + [c * torch.sigmoid(self.gate[i]) for i, c in enumerate(coeffs[1:])]
            return ptwt.waverec(kept, self.wavelet)[..., : x.shape[-1]]

    def loss_fn(m, x):
        return torch.nn.functional.mse_loss(m(x), x) + m.wavelet.wavelet_loss()
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(WaveletAE(), loss_fn), {"x": torch.randn(4, 64, generator=g)}


def _tp_model():
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                               torch.nn.Conv2d(8, 16, 3, padding=1, stride=2), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 4))


def _tp_group_reg_train():
    """torch-pruning's sparse training as its README has users do it: a GroupNormPruner (group
    L2 magnitude importance, pruning ratio 0.5, the classifier ignored) built on a user's CNN
    (two conv + batch-norm blocks, a linear head) by tracing its dependency graph, then a training
    step with `pruner.regularize(model)` between backward and the optimizer step (the group
    lasso added to the gradients of every coupled conv, batch norm and linear channel); 4 images
    of 3x8x8, 4 classes."""
    import torch
    import torch_pruning as tp

    cfg = dict(images=(4, 3, 8, 8), classes=4, channels=(8, 16), importance="GroupMagnitudeImportance(p=2)",
               pruner="GroupNormPruner", pruning_ratio=0.5, reg=1e-3, optimizer="SGD", lr=0.05)
    model = _tp_model()
    pruner = tp.pruner.GroupNormPruner(model, torch.randn(1, 3, 8, 8), importance=tp.importance.GroupMagnitudeImportance(p=2),
                                       pruning_ratio=0.5, ignored_layers=[model[-1]], reg=1e-3)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)

    def step(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        pruner.regularize(model)
        opt.step()
        return loss.detach(), _params_of(model)
    g = torch.Generator().manual_seed(1)
    return cfg, step, {"x": torch.randn(4, 3, 8, 8, generator=g), "y": torch.randint(0, 4, (4,), generator=g)}


def _tp_importance():
    """torch-pruning's importance criteria on the groups of a user's CNN's dependency graph
    (traced once, the classifier ignored), in a user function ranking channels: group L2
    magnitude normalised by the max, L1 averaged over the group and normalised by the mean, LAMP,
    batch-norm scale and FPGM (geometric median), each group's scores and the indices of the half
    to keep."""
    import torch
    import torch_pruning as tp

    cfg = dict(channels=(8, 16), root_module_types=["Conv2d"],
               importances=["l2/max", "l1/mean/mean", "LAMP", "BNScale", "FPGM"])
    model = _tp_model()
    DG = tp.DependencyGraph().build_dependency(model, example_inputs=torch.randn(1, 3, 8, 8))
    groups = list(DG.get_all_groups(ignored_layers=[model[-1]], root_module_types=[torch.nn.Conv2d]))
    imps = {"l2": tp.importance.GroupMagnitudeImportance(p=2, normalizer="max"),
            "l1_mean": tp.importance.GroupMagnitudeImportance(p=1, group_reduction="mean", normalizer="mean"),
            "lamp": tp.importance.LAMPImportance(p=2), "bn": tp.importance.BNScaleImportance(),
            "fpgm": tp.importance.FPGMImportance()}

    def scores():
        out = {}
        for name, imp in imps.items():
            for i, group in enumerate(groups):
                s = imp(group)
                out[f"{name}{i}"] = s
                out[f"{name}{i}_keep"] = torch.argsort(s, descending=True)[: len(s) // 2]
        return out
    return cfg, scores, {}


def _torchsurv_cox_weibull_train():
    """torchsurv's survival losses on a user's two-headed MLP (a Cox log hazard and Weibull log
    scale and shape): the Cox negative partial log likelihood with ties by Efron's and by
    Breslow's method (event times tie, so its tie branches run) plus the Weibull AFT negative log
    likelihood, a training step (SGD); 10 subjects of 5 features, 3 censored."""
    import torch
    from torchsurv.loss.cox import neg_partial_log_likelihood
    from torchsurv.loss.weibull import neg_log_likelihood_weibull

    torch.manual_seed(0)
    cfg = dict(subjects=10, features=5, hidden=16, censored=3, ties=["efron", "breslow"], weibull=True)

    class Surv(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.ReLU())
            self.cox = torch.nn.Linear(16, 1)
            self.weib = torch.nn.Linear(16, 2)

        def forward(self, x):
            h = self.body(x)
            return self.cox(h), self.weib(h)

    def loss_fn(m, x, event, time):
        log_hz, log_params = m(x)
        return (neg_partial_log_likelihood(log_hz, event, time, ties_method="efron")
                + neg_partial_log_likelihood(log_hz, event, time, ties_method="breslow")
                + neg_log_likelihood_weibull(log_params, event, time))
    g = torch.Generator().manual_seed(1)
    event, time = _ts_event_time()
    return cfg, _TrainStep(Surv(), loss_fn), {"x": torch.randn(10, 5, generator=g), "event": event, "time": time}


def _ts_event_time():
    """10 subjects' event indicators (3 censored) and times, with ties (8 three times, 12 twice)."""
    import torch

    return (torch.tensor([1, 1, 0, 1, 1, 0, 1, 0, 1, 1], dtype=torch.bool),
            torch.tensor([5.0, 8.0, 8.0, 12.0, 3.0, 15.0, 8.0, 20.0, 12.0, 7.0]))


def _torchsurv_metrics():
    """torchsurv's evaluation in a user's validation: inverse-probability-of-censoring weights
    (`get_ipcw`, a Kaplan-Meier of the censoring), Harrell's and the IPCW-weighted concordance
    index, the cumulative time-dependent AUC and its integral, the Brier score of predicted
    survival at 3 new times and its integral, and a KaplanMeierEstimator fitted and predicted at
    those times; 10 subjects with tied times, 3 censored."""
    import torch
    from torchsurv.metrics.auc import Auc
    from torchsurv.metrics.brier_score import BrierScore
    from torchsurv.metrics.cindex import ConcordanceIndex
    from torchsurv.stats.ipcw import get_ipcw
    from torchsurv.stats.kaplan_meier import KaplanMeierEstimator

    cfg = dict(subjects=10, censored=3, new_time=[4.0, 8.0, 12.0], auc_type="cumulative")
    cindex, auc, brier = ConcordanceIndex(), Auc(), BrierScore()

    def evaluate(risk, surv, event, time, new_time):
        ipcw = get_ipcw(event, time)
        km = KaplanMeierEstimator()
        km(event, time)
        return (cindex(risk, event, time), cindex(risk, event, time, weight=ipcw), auc(risk, event, time),
                auc.integral(), brier(surv, event, time, new_time=new_time), brier.integral(), km.predict(new_time))
    g = torch.Generator().manual_seed(1)
    event, time = _ts_event_time()
    return cfg, evaluate, {"risk": torch.randn(10, generator=g),
                           "surv": torch.rand(10, 3, generator=g).sort(-1, descending=True).values,
                           "event": event, "time": time, "new_time": torch.tensor([4.0, 8.0, 12.0])}


def _captum_model():
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(4, 8, 3, padding=1),
                               torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(2), torch.nn.Flatten(),
                               torch.nn.Linear(32, 3)).eval()


def _captum_gradient_attr():
    """captum's gradient attributions of a user's small CNN classifier (eval) in a user function:
    IntegratedGradients (zero baseline, 8 steps of the Riemann trapezoid rule, internal batch 8,
    with the convergence delta), Saliency (absolute), InputXGradient and a NoiseTunnel around
    Saliency (SmoothGrad squared, 3 samples); 2 images of 1x6x6, a target class each."""
    import torch
    from captum.attr import InputXGradient, IntegratedGradients, NoiseTunnel, Saliency

    cfg = dict(images=(2, 1, 6, 6), classes=3, ig=dict(n_steps=8, method="riemann_trapezoid", internal_batch_size=8),
               noise_tunnel=dict(nt_type="smoothgrad_sq", nt_samples=3, stdevs=0.1))
    model = _captum_model()
    ig, sal, ixg = IntegratedGradients(model), Saliency(model), InputXGradient(model)
    nt = NoiseTunnel(sal)

    def explain(x, target):
        torch.manual_seed(3)  # the noise tunnel's draws: the same on every call
        a_ig, delta = ig.attribute(x, baselines=torch.zeros_like(x), target=target, n_steps=8,
                                   method="riemann_trapezoid", internal_batch_size=8, return_convergence_delta=True)
        return (a_ig, delta, sal.attribute(x, target=target, abs=True), ixg.attribute(x, target=target),
                nt.attribute(x, nt_type="smoothgrad_sq", nt_samples=3, stdevs=0.1, target=target))
    g = torch.Generator().manual_seed(1)
    return cfg, explain, {"x": torch.randn(2, 1, 6, 6, generator=g), "target": torch.tensor([0, 2])}


def _captum_perturbation_attr():
    """captum's perturbation and layer attributions of the same kind of CNN (eval) in a user
    function: FeatureAblation over a 3-region feature mask (2 perturbations per evaluation),
    Occlusion (3x3 windows, stride 2), ShapleyValueSampling (2 samples) on the same mask, and
    LayerGradCam on the second conv (a forward hook, gradients of the layer's output) upsampled
    by `LayerAttribution.interpolate`; 2 images of 1x6x6, a target class each."""
    import torch
    from captum.attr import FeatureAblation, LayerAttribution, LayerGradCam, Occlusion, ShapleyValueSampling

    cfg = dict(images=(2, 1, 6, 6), classes=3, mask_regions=3, perturbations_per_eval=2,
               occlusion=dict(window=(1, 3, 3), strides=(1, 2, 2)), shapley_samples=2, gradcam_layer="conv2")
    model = _captum_model()
    fa, occ, svs = FeatureAblation(model), Occlusion(model), ShapleyValueSampling(model)
    gc = LayerGradCam(model, model[2])
    mask = torch.arange(36).reshape(1, 1, 6, 6) // 12

    def explain(x, target):
        torch.manual_seed(3)  # ShapleyValueSampling's permutations: the same on every call
        cam = gc.attribute(x, target=target, relu_attributions=True)
        return (fa.attribute(x, target=target, feature_mask=mask, perturbations_per_eval=2),
                occ.attribute(x, target=target, sliding_window_shapes=(1, 3, 3), strides=(1, 2, 2)),
                svs.attribute(x, target=target, feature_mask=mask, n_samples=2), cam,
                LayerAttribution.interpolate(cam, (6, 6)))
    g = torch.Generator().manual_seed(1)
    return cfg, explain, {"x": torch.randn(2, 1, 6, 6, generator=g), "target": torch.tensor([0, 2])}
# round 24: galore-torch 1.0, madgrad 1.3, rotary-embedding-torch 0.9.1, torch-kmeans 0.2.0 and torchbnn
# 1.2, code nobody tuned on, measured before anything was changed for it


def _galore_mlp():
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 12), torch.nn.Tanh(),
                               torch.nn.Linear(12, 2))


def _galore_adamw_train():
    """galore-torch's GaLoreAdamW as its README has users set it up: the 2-d weights in GaLore groups
    (the first two with the 'std' projection, rank 4, a new projector every 2 steps, scale 0.25:
    a wide 16x6 and a tall 12x16 weight, one through each side of the SVD; the head with the
    'right' projection, rank 1) and the biases in a plain group with weight decay, three training
    steps (MSE, backward, `optimizer.step()`: projection, Adam moments, bias correction, projection
    back) in a user function; a user's MLP, batch 8 of 6 features."""
    import torch
    from galore_torch import GaLoreAdamW

    cfg = dict(features=6, hidden=(16, 12), batch=8, lr=1e-2, weight_decay=1e-2, steps=3,
               galore=[dict(rank=4, update_proj_gap=2, scale=0.25, proj_type="std"),
                       dict(rank=1, update_proj_gap=2, scale=0.25, proj_type="right")])
    model = _galore_mlp()
    weights = [m.weight for m in model if isinstance(m, torch.nn.Linear)]
    biases = [m.bias for m in model if isinstance(m, torch.nn.Linear)]
    opt = GaLoreAdamW([{"params": biases, "weight_decay": 1e-2},
                       {"params": weights[:2], "rank": 4, "update_proj_gap": 2, "scale": 0.25, "proj_type": "std"},
                       {"params": weights[2:], "rank": 1, "update_proj_gap": 2, "scale": 0.25, "proj_type": "right"}],
                      lr=1e-2, no_deprecation_warning=True)

    def train(x, y):
        losses = []
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return losses, _params_of(model)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randn(8, 2, generator=g)}


def _galore_adafactor_train():
    """galore-torch's GaLoreAdafactor (relative step with warmup init, parameter scaling, a first
    moment with beta1 0.9, clipping at 1.0): the first two weights in a GaLore group with the
    'reverse_std' projection (rank 3, a new projector every 2 steps), the head with the 'full'
    (two-sided) projection, the biases in a plain group (unfactored second moments), three training
    steps (cross entropy, backward, `optimizer.step()`) in a user function; a user's MLP, batch 8 of 6
    features, 2 classes."""
    import torch
    from galore_torch import GaLoreAdafactor

    cfg = dict(features=6, hidden=(16, 12), batch=8, relative_step=True, warmup_init=True, scale_parameter=True,
               beta1=0.9, steps=3, galore=[dict(rank=3, update_proj_gap=2, scale=0.5, proj_type="reverse_std"),
                                           dict(rank=1, update_proj_gap=2, scale=0.5, proj_type="full")])
    model = _galore_mlp()
    weights = [m.weight for m in model if isinstance(m, torch.nn.Linear)]
    biases = [m.bias for m in model if isinstance(m, torch.nn.Linear)]
    opt = GaLoreAdafactor([{"params": biases},
                           {"params": weights[:2], "rank": 3, "update_proj_gap": 2, "scale": 0.5,
                            "proj_type": "reverse_std"},
                           {"params": weights[2:], "rank": 1, "update_proj_gap": 2, "scale": 0.5,
                            "proj_type": "full"}],
                          relative_step=True, warmup_init=True, scale_parameter=True, beta1=0.9)

    def train(x, y):
        losses = []
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return losses, _params_of(model)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randint(0, 2, (8,), generator=g)}


def _madgrad_train():
    """madgrad's MADGRAD (momentum 0.9, decoupled weight decay) on a user's MLP with layer norm,
    three training steps (MSE, backward, `optimizer.step()`: the step counter read from its tensor
    in the state, dual averaging of the gradient sums, the cube-root scaling, the momentum average
    towards z) in a user function; batch 8 of 6 features."""
    import torch
    import madgrad

    cfg = dict(features=6, hidden=16, batch=8, lr=1e-2, momentum=0.9, weight_decay=1e-3, decouple_decay=True, steps=3)
    model = _sf_model()
    opt = madgrad.MADGRAD(model.parameters(), lr=1e-2, momentum=0.9, weight_decay=1e-3, decouple_decay=True)

    def train(x, y):
        losses = []
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return losses, _params_of(model)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randn(8, 1, generator=g)}


def _madgrad_mirror_eps0():
    """madgrad's MirrorMADGRAD (momentum 0.9, eps 0: zero second moments set to inf, weight decay on
    the gradient) on one model and MADGRAD without momentum (x0 recomputed each step, eps 0, weight
    decay on the gradient) on a second whose first layer gets no gradient in some rows (a ReLU dead
    on the batch), two training steps each (MSE, backward, step) in a user function; batch 8 of 6
    features."""
    import torch
    import madgrad

    cfg = dict(features=6, hidden=16, batch=8, mirror=dict(lr=1e-2, momentum=0.9, eps=0.0, weight_decay=1e-3),
               madgrad=dict(lr=1e-2, momentum=0.0, eps=0.0, weight_decay=1e-3), steps=2)
    torch.manual_seed(0)
    m1 = _sf_model()
    m2 = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    with torch.no_grad():
        m2[0].bias[:4] = -100.0  # four hidden units never fire: zero gradient rows
    o1 = madgrad.MirrorMADGRAD(m1.parameters(), lr=1e-2, momentum=0.9, eps=0.0, weight_decay=1e-3)
    o2 = madgrad.MADGRAD(m2.parameters(), lr=1e-2, momentum=0.0, eps=0.0, weight_decay=1e-3)

    def train(x, y):
        out = []
        for m, o in ((m1, o1), (m2, o2)):
            for _ in range(2):
                o.zero_grad()
                loss = torch.nn.functional.mse_loss(m(x), y)
                loss.backward()
                o.step()
                out.append(loss.detach())
        return out, _params_of(m1), _params_of(m2)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randn(8, 1, generator=g)}


def _rotary_xpos_cached():
    """rotary-embedding-torch in a user's causal attention, eval: xpos rotary embeddings
    (`rotate_queries_and_keys`: the length-extrapolatable scales, cached after the first call) on
    the prompt, then a decoding step with a KV cache (`rotate_queries_with_cached_keys`, 1 query
    against 7 keys); a second RotaryEmbedding (NTK theta rescale, interpolation factor 2,
    sequence before the heads, partial rotation of 8 of 16 features) with
    `rotate_queries_or_keys` at an offset; batch 2, 2 heads, 6 prompt tokens."""
    import torch
    from rotary_embedding_torch import RotaryEmbedding

    torch.manual_seed(0)
    cfg = dict(dim=16, heads=2, prompt=6, xpos=dict(dim=8, use_xpos=True, xpos_scale_base=64),
               ntk=dict(dim=8, theta_rescale_factor=2.0, interpolate_factor=2.0, seq_before_head_dim=True))

    class Attention(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = torch.nn.Linear(16, 3 * 16, bias=False)
            self.out = torch.nn.Linear(16, 16)
            self.rotary = RotaryEmbedding(dim=8, use_xpos=True, xpos_scale_base=64)

        def split(self, x):
            b, n, _ = x.shape
            return [t.view(b, n, 2, 8).transpose(1, 2) for t in self.qkv(x).chunk(3, dim=-1)]

        def attend(self, q, k, v):
            i, j = q.shape[-2], k.shape[-2]
            causal = torch.ones(i, j, dtype=torch.bool).triu(j - i + 1)
            sim = (q @ k.transpose(-1, -2)) * 8 ** -0.5
            out = sim.masked_fill(causal, float("-inf")).softmax(-1) @ v
            return self.out(out.transpose(1, 2).reshape(q.shape[0], i, 16))

        def forward(self, x, new):
            q, k, v = self.split(x)
            q, k = self.rotary.rotate_queries_and_keys(q, k)
            prompt_out = self.attend(q, k, v)
            _, k_all, v_all = self.split(torch.cat((x, new), dim=1))
            q_new = self.split(new)[0]
            q_new, k_all = self.rotary.rotate_queries_with_cached_keys(q_new, k_all)
            return prompt_out, self.attend(q_new, k_all, v_all)

    attn = Attention().eval()
    ntk = RotaryEmbedding(dim=8, theta_rescale_factor=2.0, interpolate_factor=2.0, seq_before_head_dim=True)

    def run(x, new, t):
        prompt_out, step_out = attn(x, new)
        return prompt_out, step_out, ntk.rotate_queries_or_keys(t, offset=3)
    g = torch.Generator().manual_seed(1)
    return cfg, run, {"x": torch.randn(2, 6, 16, generator=g), "new": torch.randn(2, 1, 16, generator=g),
                      "t": torch.randn(2, 5, 2, 16, generator=g)}


def _rotary_axial_train():
    """rotary-embedding-torch's axial rotary embeddings in a user's tiny ViT block: a 'pixel'
    RotaryEmbedding's `get_axial_freqs(4, 4, offsets=...)` (a tensor of offsets) applied to the
    patch queries and keys with `apply_rotary_emb`, a learned-frequency 'lang' RotaryEmbedding
    (not cached) rotating 6 of the 8 features of the flattened sequence's queries and keys, and
    `apply_learned_rotations` of predicted angles with frequency ranges from feature 2 on: a
    training step (cross entropy, backward, SGD); 2 images of 4x4 patches of 16 features, 2 heads."""
    import torch
    from rotary_embedding_torch import RotaryEmbedding, apply_learned_rotations, apply_rotary_emb

    torch.manual_seed(0)
    cfg = dict(patches=(4, 4), dim=16, heads=2, pixel=dict(dim=4, freqs_for="pixel", max_freq=8),
               learned=dict(dim=6, learned_freq=True), learned_rotations=dict(freq_ranges=2), classes=3)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = torch.nn.Linear(16, 48, bias=False)
            self.pixel = RotaryEmbedding(dim=4, freqs_for="pixel", max_freq=8)
            self.lang = RotaryEmbedding(dim=6, learned_freq=True)
            self.angles = torch.nn.Linear(16, 2)
            self.register_buffer("freq_ranges", torch.tensor([1.0, 2.0]))
            self.head = torch.nn.Linear(16, 3)

        def forward(self, x, offsets):
            b, h, w, _ = x.shape
            q, k, v = (t.view(b, h, w, 2, 8).permute(0, 3, 1, 2, 4) for t in self.qkv(x).chunk(3, dim=-1))
            freqs = self.pixel.get_axial_freqs(h, w, offsets=offsets)
            q, k = apply_rotary_emb(freqs, q), apply_rotary_emb(freqs, k)
            q, k, v = (t.reshape(b, 2, h * w, 8) for t in (q, k, v))
            q, k = self.lang.rotate_queries_or_keys(q), self.lang.rotate_queries_or_keys(k)
            out = ((q @ k.transpose(-1, -2)) * 8 ** -0.5).softmax(-1) @ v
            out = out.transpose(1, 2).reshape(b, h * w, 16)
            out = apply_learned_rotations(self.angles(out), out, start_index=2, freq_ranges=self.freq_ranges)
            return self.head(out.mean(1))

    model = Block()

    def loss_fn(m, x, offsets, y):
        return torch.nn.functional.cross_entropy(m(x, offsets), y)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"x": torch.randn(2, 4, 4, 16, generator=g),
                                             "offsets": torch.tensor([0.25, -0.5]),
                                             "y": torch.randint(0, 3, (2,), generator=g)}


def _kmeans_blobs(g, bs=2, n=24, d=3):
    import torch

    centers = torch.tensor([[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0], [-4.0, -4.0, 0.0]])
    labels = torch.arange(n) % 4
    return centers[labels].expand(bs, n, d) + 0.5 * torch.randn(bs, n, d, generator=g)


def _torch_kmeans_fit_predict():
    """torch-kmeans' KMeans as a user clusters a batch of point sets: k-means++ initialisation (a
    seeded generator, 2 initial configurations), 'unit' normalisation of the inputs (zeros masked to
    eps), a different number of clusters per instance (a tensor k of 4 and 3: the padded centers
    masked to inf), Lloyd iterations until the center shift is under the tolerance (at most 8), the
    best configuration by inertia; then `fit` and `predict` of new points, in a user function;
    2 instances of 24 points in 3-d."""
    import torch
    from torch_kmeans import KMeans

    cfg = dict(init_method="k-means++", num_init=2, max_iter=8, tol=1e-4, normalize="unit", k=[4, 3], seed=123,
               points=(2, 24, 3))
    km = KMeans(init_method="k-means++", num_init=2, max_iter=8, tol=1e-4, normalize="unit", verbose=False, seed=123)

    def cluster(x, k, x_new):
        result = km(x, k=k)
        km.fit(x, k=k)
        return result.labels, result.centers, result.inertia, km.predict(x_new)
    g = torch.Generator().manual_seed(1)
    return cfg, cluster, {"x": _kmeans_blobs(g), "k": torch.tensor([4, 3]), "x_new": _kmeans_blobs(g, n=8)}


def _torch_kmeans_soft_train():
    """torch-kmeans' SoftKMeans (cosine similarity, temperature 5, 2 random initial configurations,
    the best kept by summed similarity, a last differentiable fixpoint step under enable_grad) on a
    user's encoder's embeddings: a training step on the soft assignments (the negative log
    likelihood of the points' blob labels under the assignment probabilities, minus the mean of
    each point's highest similarity to a center); 2 instances of 24 points in 3-d, 4 clusters."""
    import torch
    from torch_kmeans import SoftKMeans

    torch.manual_seed(0)
    cfg = dict(init_method="rnd", num_init=2, max_iter=6, n_clusters=4, temp=5.0, encoder=(3, 16, 8), points=(2, 24, 3))
    model = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8))
    skm = SoftKMeans(num_init=2, max_iter=6, n_clusters=4, temp=5.0, verbose=False, seed=123)

    def loss_fn(m, x, y):
        result = skm(m(x))
        nll = torch.nn.functional.nll_loss(torch.log(result.soft_assignment + 1e-8).flatten(0, 1), y.flatten())
        return nll - result.inertia.max(-1).values.mean()
    g = torch.Generator().manual_seed(1)
    x = _kmeans_blobs(g)
    return cfg, _TrainStep(model, loss_fn), {"x": x, "y": (torch.arange(24) % 4).expand(2, 24)}


def _torchbnn_mlp_train():
    """torchbnn's Bayesian MLP as its README trains it: BayesLinear layers (prior mean 0, sigma 0.1,
    weights sampled with the reparameterisation trick on every call), cross entropy plus 0.01 times
    BKLLoss (the KL divergence of every Bayesian layer to the prior, averaged over the parameter
    count): a training step (Adam); batch 8 of 4 features, 3 classes."""
    import torch
    import torchbnn as bnn

    torch.manual_seed(0)
    cfg = dict(features=4, hidden=16, classes=3, prior_mu=0.0, prior_sigma=0.1, kl_weight=0.01, kl_reduction="mean")
    model = torch.nn.Sequential(bnn.BayesLinear(prior_mu=0.0, prior_sigma=0.1, in_features=4, out_features=16),
                                torch.nn.ReLU(),
                                bnn.BayesLinear(prior_mu=0.0, prior_sigma=0.1, in_features=16, out_features=3))
    kl_loss = bnn.BKLLoss(reduction="mean", last_layer_only=False)

    def loss_fn(m, x, y):
        return torch.nn.functional.cross_entropy(m(x), y) + 0.01 * kl_loss(m)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"x": torch.randn(8, 4, generator=g),
                                             "y": torch.randint(0, 3, (8,), generator=g)}


def _torchbnn_cnn_frozen():
    """torchbnn's Bayesian CNN (BayesConv2d, BayesBatchNorm2d with a cumulative moving average,
    momentum None, BayesLinear) in a user function: a training-mode forward and the summed KL of the
    last Bayesian layer (`bayesian_kl_loss(..., reduction='sum', last_layer_only=True)`), then
    `torchbnn.utils.freeze` (one weight sample fixed in each layer), two eval predictions (equal),
    `unfreeze` and a sampled eval prediction; 2 images of 1x6x6, 4 classes."""
    import torch
    import torchbnn as bnn
    from torchbnn.utils import freeze, unfreeze

    torch.manual_seed(0)
    cfg = dict(image=(2, 1, 6, 6), channels=4, classes=4, prior_mu=0.0, prior_sigma=0.1, bn_momentum=None,
               kl=dict(reduction="sum", last_layer_only=True))
    model = torch.nn.Sequential(bnn.BayesConv2d(0.0, 0.1, 1, 4, kernel_size=3, padding=1),
                                bnn.BayesBatchNorm2d(0.0, 0.1, 4, momentum=None), torch.nn.ReLU(),
                                torch.nn.Flatten(), bnn.BayesLinear(0.0, 0.1, 4 * 6 * 6, 4))

    def run(x):
        model.train()
        logits = model(x)
        kl = bnn.functional.bayesian_kl_loss(model, reduction="sum", last_layer_only=True)
        model.eval()
        freeze(model)
        p1, p2 = model(x), model(x)
        unfreeze(model)
        return logits, kl, p1, p2, model(x), model[1].running_mean
    g = torch.Generator().manual_seed(1)
    return cfg, run, {"x": torch.randn(2, 1, 6, 6, generator=g)}


# round 25: dadaptation 3.2, came-pytorch 0.1.3, pytorch-ranger 0.1.1, hyper-connections 0.4.11 and
# tensordict 0.15.3, code nobody tuned on, measured before anything was changed for it


def _dadapt_adam_train():
    """dadaptation's DAdaptAdam as its README has users set it up (lr 1.0, the step size found by
    D-Adaptation): decoupled weight decay, bias correction, a growth rate of 1.02, three training
    steps (MSE, backward, `optimizer.step()`: the numerator and the l1 norm of s accumulated with
    `.item()` over the parameters, the d estimate, the Adam update) in a user function; a user's MLP
    with layer norm, batch 8 of 6 features."""
    import torch
    import dadaptation

    cfg = dict(features=6, hidden=16, batch=8, lr=1.0, weight_decay=1e-3, decouple=True,
               use_bias_correction=True, growth_rate=1.02, steps=3)
    model = _sf_model()
    opt = dadaptation.DAdaptAdam(model.parameters(), lr=1.0, weight_decay=1e-3, decouple=True,
                                 use_bias_correction=True, growth_rate=1.02)

    def train(x, y):
        losses = []
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return losses, _params_of(model)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randn(8, 1, generator=g)}


def _dadapt_sgd_adagrad_lion():
    """dadaptation's DAdaptSGD (momentum 0.9, weight decay), DAdaptAdaGrad (momentum 0.5, weight
    decay) and DAdaptLion (weight decay) on three copies of a user's MLP, two training steps each
    (MSE, backward, step: the gradient norms and weighted sums read with `.item()`, the d estimate
    grown from d0) in a user function; batch 8 of 6 features."""
    import torch
    import dadaptation

    cfg = dict(features=6, hidden=16, batch=8, sgd=dict(lr=1.0, momentum=0.9, weight_decay=1e-3),
               adagrad=dict(lr=1.0, momentum=0.5, weight_decay=1e-3), lion=dict(lr=1.0, weight_decay=1e-3), steps=2)
    models = [_sf_model() for _ in range(3)]
    opts = [dadaptation.DAdaptSGD(models[0].parameters(), lr=1.0, momentum=0.9, weight_decay=1e-3),
            dadaptation.DAdaptAdaGrad(models[1].parameters(), lr=1.0, momentum=0.5, weight_decay=1e-3),
            dadaptation.DAdaptLion(models[2].parameters(), lr=1.0, weight_decay=1e-3)]

    def train(x, y):
        out = []
        for m, o in zip(models, opts):
            for _ in range(2):
                o.zero_grad()
                loss = torch.nn.functional.mse_loss(m(x), y)
                loss.backward()
                o.step()
                out.append(loss.detach())
        return out, [_params_of(m) for m in models]
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randn(8, 1, generator=g)}


def _came_mlp_train():
    """came-pytorch's CAME (lr 2e-4 as its README, betas (0.9, 0.999, 0.9999), weight decay 1e-2) on a
    user's MLP: three training steps (MSE, backward, `optimizer.step()`: factored second moments of
    the 2-d weights from row and column means, unfactored ones for the biases and the layer norm,
    the update clipped by its RMS, the confidence-guided residual) in a user function; batch 8 of 6
    features."""
    import torch
    from came_pytorch import CAME

    cfg = dict(features=6, hidden=16, batch=8, lr=2e-4, betas=(0.9, 0.999, 0.9999), weight_decay=1e-2,
               eps=(1e-30, 1e-16), steps=3)
    model = _sf_model()
    opt = CAME(model.parameters(), lr=2e-4, weight_decay=1e-2, betas=(0.9, 0.999, 0.9999), eps=(1e-30, 1e-16))

    def train(x, y):
        losses = []
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return losses, _params_of(model)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randn(8, 1, generator=g)}


def _came_cnn_train():
    """came-pytorch's CAME on a user's CNN (conv weights of 4 dimensions factored over their last two,
    clip threshold 0.5, no weight decay), a frozen first conv whose parameters have no gradient:
    two training steps (cross entropy, backward, `optimizer.step()`) in a user function; 2 images of
    1x6x6, 3 classes."""
    import torch
    from came_pytorch import CAME

    torch.manual_seed(0)
    cfg = dict(image=(2, 1, 6, 6), channels=(4, 4), classes=3, lr=1e-3, clip_threshold=0.5)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(4, 4, 3),
                                torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 4 * 4, 3))
    model[0].requires_grad_(False)
    opt = CAME(model.parameters(), lr=1e-3, clip_threshold=0.5)

    def train(x, y):
        losses = []
        for _ in range(2):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return losses, _params_of(model)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(2, 1, 6, 6, generator=g), "y": torch.randint(0, 3, (2,), generator=g)}


def _ranger_train():
    """pytorch-ranger's Ranger (RAdam with lookahead every 2 steps, alpha 0.5, betas (0.9, 0.9) so
    that the rectification's N_sma passes the threshold 4 after a few steps: the SGD-like update
    first, the rectified one after, weight decay) on a user's MLP: six training steps (MSE,
    backward, `optimizer.step()`) in a user function; batch 8 of 6 features."""
    import torch
    from pytorch_ranger import Ranger

    cfg = dict(features=6, hidden=16, batch=8, lr=1e-2, alpha=0.5, k=2, N_sma_threshhold=4, betas=(0.9, 0.9),
               weight_decay=1e-3, steps=6)
    model = _sf_model()
    opt = Ranger(model.parameters(), lr=1e-2, alpha=0.5, k=2, N_sma_threshhold=4, betas=(0.9, 0.9), weight_decay=1e-3)

    def train(x, y):
        losses = []
        for _ in range(6):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return losses, _params_of(model)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randn(8, 1, generator=g)}


def _ranger_va_qh():
    """pytorch-ranger's RangerVA (amsgrad, softplus transformer, lookahead every 2 steps) and RangerQH
    (quasi-hyperbolic momentum, decoupled weight decay, lookahead every 2 steps) on two copies of a
    user's MLP, three training steps each (MSE, backward, step) in a user function; batch 8 of 6
    features."""
    import torch
    from pytorch_ranger import RangerQH, RangerVA

    cfg = dict(features=6, hidden=16, batch=8, va=dict(lr=1e-2, k=2, amsgrad=True, transformer="softplus"),
               qh=dict(lr=1e-2, k=2, weight_decay=1e-3, decouple_weight_decay=True), steps=3)
    m1, m2 = _sf_model(), _sf_model()
    o1 = RangerVA(m1.parameters(), lr=1e-2, k=2, amsgrad=True, transformer="softplus")
    o2 = RangerQH(m2.parameters(), lr=1e-2, k=2, weight_decay=1e-3, decouple_weight_decay=True)

    def train(x, y):
        out = []
        for m, o in ((m1, o1), (m2, o2)):
            for _ in range(3):
                o.zero_grad()
                loss = torch.nn.functional.mse_loss(m(x), y)
                loss.backward()
                o.step()
                out.append(loss.detach())
        return out, _params_of(m1), _params_of(m2)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randn(8, 1, generator=g)}


def _hc_transformer_train():
    """hyper-connections' HyperConnections as its README wires them into a user's tiny transformer:
    `get_init_and_expand_reduce_stream_functions(4, dim=16, add_stream_embed=True)` (the stream
    embeddings on expansion), an attention block and a feed-forward block each wrapped as a
    branch (layer index 0 and 1, dropout 0.1), a third layer with 2 fractions (frac-connections)
    through `decorate_branch`, the streams summed back: a training step (cross entropy, SGD);
    batch 2 of 5 tokens of 16 features, 3 classes."""
    import torch
    from hyper_connections import HyperConnections, get_init_and_expand_reduce_stream_functions

    torch.manual_seed(0)
    cfg = dict(streams=4, dim=16, tokens=5, heads=2, dropout=0.1, fracs_layer=dict(num_fracs=2), classes=3)

    class Attn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = torch.nn.MultiheadAttention(16, 2, batch_first=True)

        def forward(self, x):
            return self.mha(x, x, x, need_weights=False)[0]

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            init_hc, self.expand, self.reduce = get_init_and_expand_reduce_stream_functions(
                4, dim=16, add_stream_embed=True)
            self.attn = init_hc(branch=Attn(), layer_index=0, dropout=0.1)
            self.ff = init_hc(branch=torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                                                          torch.nn.Linear(32, 16)), layer_index=1, dropout=0.1)
            self.frac = HyperConnections(4, dim=16, num_fracs=2, layer_index=2)
            self.frac_ff = torch.nn.Linear(16, 16)
            self.head = torch.nn.Linear(16, 3)

        def forward(self, x):
            r = self.expand(x)
            r = self.ff(self.attn(r))
            r = self.frac.decorate_branch(self.frac_ff)(r)
            return self.head(self.reduce(r).mean(1))

    model = Model()

    def loss_fn(m, x, y):
        return torch.nn.functional.cross_entropy(m(x), y)
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"x": torch.randn(2, 5, 16, generator=g),
                                             "y": torch.randint(0, 3, (2,), generator=g)}


def _mhc_eval():
    """hyper-connections' manifold-constrained variant (mHC): a user's residual MLP stack of three
    layers through `mc_get_init_and_expand_reduce_stream_functions(4)`, the residual mixing made
    doubly stochastic by Sinkhorn-Knopp (10 iterations; the log-domain form in the second layer),
    two dynamic alpha proposals in the third, a branch returning a tuple (the residual added to
    its first element), and a channel-first HyperConnections around a user's 1x1 conv; eval, in a
    user function; batch 2 of 5 tokens of 16 features, 2 images of 8x3x3."""
    import torch
    from hyper_connections import HyperConnections, mc_get_init_and_expand_reduce_stream_functions

    torch.manual_seed(0)
    cfg = dict(streams=4, dim=16, tokens=5, sinkhorn_iters=10, log_domain_layer=1, proposals_layer=2,
               channel_first=dict(channels=8, image=(3, 3)))
    init_hc, expand, reduce = mc_get_init_and_expand_reduce_stream_functions(4, sinkhorn_iters=10)

    class TupleBranch(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(16, 16)

        def forward(self, x):
            h = self.lin(x)
            return h, h.norm(dim=-1)

    layers = torch.nn.ModuleList([
        init_hc(dim=16, branch=torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.SiLU()), layer_index=0),
        init_hc(dim=16, branch=torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.SiLU()), layer_index=1,
                log_domain_sinkhorn=True),
        init_hc(dim=16, branch=TupleBranch(), layer_index=2, num_dynamic_alpha_proposals=2)]).eval()
    conv_hc = HyperConnections(2, dim=8, branch=torch.nn.Conv2d(8, 8, 1), channel_first=True, layer_index=0).eval()
    expand2, reduce2 = HyperConnections.get_expand_reduce_stream_functions(2)

    def run(x, img):
        r = expand(x)
        norms = []
        for i, layer in enumerate(layers):
            r = layer(r)
            if isinstance(r, tuple):
                r, n = r
                norms.append(n)
        return reduce(r), norms, reduce2(conv_hc(expand2(img)))
    g = torch.Generator().manual_seed(1)
    return cfg, run, {"x": torch.randn(2, 5, 16, generator=g), "img": torch.randn(2, 8, 3, 3, generator=g)}


def _tensordict_policy_eval():
    """tensordict's nn stack as TorchRL users build a policy, eval, in a user function: a
    TensorDictSequential of a TensorDictModule encoder ("obs" -> "hidden"), a
    TensorDictModule actor with NormalParamExtractor ("hidden" -> "loc", "scale") and a
    ProbabilisticTensorDictModule (Normal, deterministic mode, log-prob written), a value head;
    the batch of 6 built as a TensorDict with a nested "next" entry, then `select`, `exclude`,
    `apply`, boolean-mask indexing by the "done" flags (a data-dependent number of rows),
    `split`, `torch.stack` of the halves and `update`; 6 observations of 4 features."""
    import torch
    from tensordict import TensorDict
    from tensordict.nn import (NormalParamExtractor, ProbabilisticTensorDictModule, TensorDictModule,
                               TensorDictSequential)

    torch.manual_seed(0)
    cfg = dict(obs=4, hidden=16, action=2, batch=6, distribution="Normal", mode="deterministic", split=3)
    encoder = TensorDictModule(torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh()), in_keys=["obs"],
                               out_keys=["hidden"])
    actor = TensorDictModule(torch.nn.Sequential(torch.nn.Linear(16, 4), NormalParamExtractor()),
                             in_keys=["hidden"], out_keys=["loc", "scale"])
    dist = ProbabilisticTensorDictModule(in_keys=["loc", "scale"], out_keys=["action"],
                                         distribution_class=torch.distributions.Normal,
                                         default_interaction_type="deterministic", return_log_prob=True)
    value = TensorDictModule(torch.nn.Linear(16, 1), in_keys=["hidden"], out_keys=["value"])
    policy = TensorDictSequential(encoder, actor, dist, value).eval()

    def run(obs, next_obs, reward, done):
        td = TensorDict({"obs": obs, "next": {"obs": next_obs, "reward": reward, "done": done}}, batch_size=[6])
        td = policy(td)
        small = td.select("obs", "action", "value", ("next", "reward")).exclude("obs")
        scaled = small.apply(lambda t: t * 2.0)
        finished = td[td["next", "done"].squeeze(-1)]
        a, b = td.split(3, dim=0)
        stacked = torch.stack([a, b], dim=0)
        stacked.update({"advantage": stacked["next", "reward"] - stacked["value"]})
        return (td["action"], td["action_log_prob"], scaled["value"], finished["obs"], stacked["advantage"],
                stacked.batch_size)
    g = torch.Generator().manual_seed(1)
    return cfg, run, {"obs": torch.randn(6, 4, generator=g), "next_obs": torch.randn(6, 4, generator=g),
                      "reward": torch.randn(6, 1, generator=g),
                      "done": torch.tensor([[False], [True], [False], [False], [True], [False]])}


def _tensordict_train():
    """a training step on a TensorDict batch through tensordict's modules: a TensorDictModule
    critic and a TensorDictSequential actor (with `selected_out_keys`) fill the batch, the loss read
    from it (the critic's MSE on the rewards plus the actor's MSE on target actions, only on the
    rows not done, masked with `td[mask]`), `TensorDict.from_module` for the parameter norm added
    to the loss; a user's step (SGD); batch 8 of 4 features."""
    import torch
    from tensordict import TensorDict
    from tensordict.nn import TensorDictModule, TensorDictSequential

    torch.manual_seed(0)
    cfg = dict(obs=4, hidden=16, action=2, batch=8, weight_norm=1e-3)

    class Agent(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.critic = TensorDictModule(torch.nn.Linear(4, 1), in_keys=["obs"], out_keys=["value"])
            self.actor = TensorDictSequential(
                TensorDictModule(torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU()), in_keys=["obs"],
                                 out_keys=["hidden"]),
                TensorDictModule(torch.nn.Linear(16, 2), in_keys=["hidden"], out_keys=["action"]),
                selected_out_keys=["action"])

        def forward(self, td):
            return self.actor(self.critic(td))

    model = Agent()

    def loss_fn(m, obs, reward, target, done):
        td = m(TensorDict(obs=obs, reward=reward, target=target, done=done, batch_size=[8]))
        live = td[~td["done"]]
        weights = TensorDict.from_module(m)
        norm = sum(w.pow(2).sum() for w in weights.values(include_nested=True, leaves_only=True))
        return ((td["value"] - td["reward"]) ** 2).mean() + ((live["action"] - live["target"]) ** 2).mean() \
            + 1e-3 * norm
    g = torch.Generator().manual_seed(1)
    return cfg, _TrainStep(model, loss_fn), {"obs": torch.randn(8, 4, generator=g),
                                             "reward": torch.randn(8, 1, generator=g),
                                             "target": torch.randn(8, 2, generator=g),
                                             "done": torch.tensor([False, True, False, False, True, False, False,
                                                                   True])}


# round 26: torch-pca 1.1.0, heavyball 3.2.1, torchjd 0.18.0, torchbayesian 0.2.1 and torch-cgd 0.0.2,
# code nobody tuned on, measured before anything was changed for it


def _torch_pca_mle_score():
    """torch-pca's PCA with Minka's MLE for the number of components (`n_components="mle"`, the
    'auto' solver picking the full SVD): `fit_transform` (the SVD, svd_flip, `infer_mle` over the
    ranks), `inverse_transform`, and `score` (the probabilistic-PCA precision from the noise
    variance, slogdet) in a user function; 20 samples of 5 correlated features."""
    import torch
    from torch_pca import PCA

    cfg = dict(samples=20, features=5, n_components="mle", svd_solver="auto")

    def run(x):
        pca = PCA(n_components="mle")
        z = pca.fit_transform(x)
        return z, pca.inverse_transform(z), pca.score(x), pca.explained_variance_ratio_
    g = torch.Generator().manual_seed(1)
    return cfg, run, {"x": torch.randn(20, 5, generator=g) @ torch.randn(5, 5, generator=g)}


def _torch_pca_eigh_randomized():
    """torch-pca's PCA with the covariance eigendecomposition ('auto' on 40 samples of 4 features,
    negative eigenvalues clipped) keeping 90% of the variance (`n_components=0.9`, whitened):
    `fit`, `transform(center="input")`, `get_covariance`; then the randomized solver (2 components,
    `random_state=0`, 2 power iterations with the LU normalizer) `fit_transform` and
    `get_precision`, in a user function."""
    import torch
    from torch_pca import PCA

    cfg = dict(samples=40, features=4, variance=0.9, whiten=True,
               randomized=dict(n_components=2, random_state=0, iterated_power=2, power_iteration_normalizer="LU"))

    def run(x):
        pca = PCA(n_components=0.9, whiten=True)
        pca.fit(x)
        z = pca.transform(x, center="input")
        rnd = PCA(n_components=2, svd_solver="randomized", random_state=0, iterated_power=2,
                  power_iteration_normalizer="LU")
        w = rnd.fit_transform(x)
        return z, pca.get_covariance(), w, rnd.get_precision()
    g = torch.Generator().manual_seed(1)
    return cfg, run, {"x": torch.randn(40, 4, generator=g) @ torch.randn(4, 4, generator=g)}


def _heavyball_soap_adamw_train():
    """heavyball's SOAP (the preconditioner's eigenbases refreshed every 2 steps, weight decay) and
    AdamW (2 warmup steps, cautious updates, weight decay) on two copies of a user's MLP, three
    training steps each (MSE, backward, `optimizer.step()`) in a user function; heavyball's own
    compilation of its step functions off (`heavyball.utils.compile_mode = None`), so that the
    eager reference runs eagerly and the entry's torch.compile is the only one; batch 8 of 6
    features."""
    import torch
    import heavyball

    heavyball.utils.compile_mode = None
    cfg = dict(features=6, hidden=16, batch=8, soap=dict(lr=1e-2, precondition_frequency=2, weight_decay=1e-3),
               adamw=dict(lr=1e-2, warmup_steps=2, caution=True, weight_decay=1e-3), steps=3)
    m1, m2 = _sf_model(), _sf_model()
    o1 = heavyball.SOAP(m1.parameters(), lr=1e-2, precondition_frequency=2, weight_decay=1e-3)
    o2 = heavyball.AdamW(m2.parameters(), lr=1e-2, warmup_steps=2, caution=True, weight_decay=1e-3)

    def train(x, y):
        out = []
        for m, o in ((m1, o1), (m2, o2)):
            for _ in range(3):
                o.zero_grad()
                loss = torch.nn.functional.mse_loss(m(x), y)
                loss.backward()
                o.step()
                out.append(loss.detach())
        return out, _params_of(m1), _params_of(m2)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randn(8, 1, generator=g)}


def _heavyball_psgd_muon_train():
    """heavyball's PSGDKron (Kronecker-factored preconditioner, updated with the default
    probability schedule) and Muon (Newton-Schulz orthogonalised momentum) on two copies of a
    user's MLP, three training steps each (MSE, backward, `optimizer.step()`) in a user function;
    heavyball's own compilation off (`heavyball.utils.compile_mode = None`); batch 8 of 6
    features."""
    import torch
    import heavyball

    heavyball.utils.compile_mode = None
    cfg = dict(features=6, hidden=16, batch=8, psgd_kron=dict(lr=1e-2), muon=dict(lr=1e-2), steps=3)
    m1, m2 = _sf_model(), _sf_model()
    o1 = heavyball.PSGDKron(m1.parameters(), lr=1e-2)
    o2 = heavyball.Muon(m2.parameters(), lr=1e-2)

    def train(x, y):
        out = []
        for m, o in ((m1, o1), (m2, o2)):
            for _ in range(3):
                o.zero_grad()
                loss = torch.nn.functional.mse_loss(m(x), y)
                loss.backward()
                o.step()
                out.append(loss.detach())
        return out, _params_of(m1), _params_of(m2)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randn(8, 1, generator=g)}


def _torchjd_aggregators():
    """torchjd's aggregators applied to a Jacobian matrix as its aggregation docs show (`A(J)`):
    PCGrad, MGDA, IMTL-G, Aligned-MTL, GradVac, GradDrop, ConFIG, TrimmedMean and PCD on the
    Jacobian of 3 objectives, Krum (1 Byzantine row, 2 selected) on one of 5, in a user function;
    10 parameters."""
    import torch
    from torchjd.aggregation import (IMTLG, MGDA, PCD, AlignedMTL, ConFIG, GradDrop, GradVac, Krum, PCGrad,
                                     TrimmedMean)

    torch.manual_seed(0)
    cfg = dict(objectives=3, params=10, krum=dict(rows=5, n_byzantine=1, n_selected=2), trim_number=1)
    aggs = [PCGrad(), MGDA(), IMTLG(), AlignedMTL(), GradVac(), GradDrop(), ConFIG(), TrimmedMean(trim_number=1),
            PCD()]
    krum = Krum(n_byzantine=1, n_selected=2)

    def run(J, J5):
        return [a(J) for a in aggs], krum(J5)
    g = torch.Generator().manual_seed(1)
    return cfg, run, {"J": torch.randn(3, 10, generator=g), "J5": torch.randn(5, 10, generator=g)}


def _torchjd_scalarization_train():
    """torchjd's scalarizers as a multi-task training loop uses them, on a user's shared trunk with a
    regression and a classification head: one training step each with GeometricMean, UW
    (learned log-variances), IMTL-L (learned scales) and STCH (mu 0.5) turning the two task losses
    into one (backward, SGD step on the model and the scalarizer's parameters), in a user
    function; batch 8 of 6 features, 3 classes."""
    import torch
    from torchjd.scalarization import IMTLL, STCH, UW, GeometricMean

    torch.manual_seed(0)
    cfg = dict(features=6, hidden=16, classes=3, batch=8, scalarizers=["GeometricMean", "UW", "IMTLL", "STCH(mu=0.5)"])
    trunk = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU())
    reg, cls = torch.nn.Linear(16, 1), torch.nn.Linear(16, 3)
    scalarizers = [GeometricMean(), UW(2), IMTLL(2), STCH(mu=0.5)]
    params = [*trunk.parameters(), *reg.parameters(), *cls.parameters()]
    for s in scalarizers:
        params += list(s.parameters())
    opt = torch.optim.SGD(params, lr=1e-2)

    def train(x, y, c):
        out = []
        for s in scalarizers:
            opt.zero_grad()
            h = trunk(x)
            losses = torch.stack([torch.nn.functional.mse_loss(reg(h), y),
                                  torch.nn.functional.cross_entropy(cls(h), c)])
            loss = s(losses)
            loss.backward()
            opt.step()
            out.append(loss.detach())
        return out, _params_of(trunk)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randn(8, 1, generator=g),
                        "c": torch.randint(0, 3, (8,), generator=g)}


def _torchbayesian_bnn_train():
    """torchbayesian's BayesianModule (Bayes by Backprop) around a user's MLP: every parameter
    reparametrized with a diagonal Gaussian posterior, a Gaussian prior (mu 0, sigma 0.1); a
    training step on cross entropy plus 1e-3 times the mean-reduced analytic KL divergence (a
    prior built per parameter, `torch.distributions.kl_divergence`), Adam; batch 8 of 6
    features, 3 classes."""
    import torch
    from torchbayesian.bnn import BayesianModule

    torch.manual_seed(0)
    cfg = dict(features=6, hidden=16, classes=3, batch=8, posterior="gaussian",
               prior=("gaussian", dict(mu=0.0, sigma=0.1)), kl_weight=1e-3, reduction="mean")
    net = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    bnn = BayesianModule(net, prior=("gaussian", {"mu": 0.0, "sigma": 0.1}))
    opt = torch.optim.Adam(bnn.parameters(), lr=1e-2)

    def train(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(bnn(x), y) + 1e-3 * bnn.kl_divergence(reduction="mean")
        loss.backward()
        opt.step()
        return loss.detach(), _params_of(bnn)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randint(0, 3, (8,), generator=g)}


def _torchbayesian_mc_predict():
    """torchbayesian at prediction time, eval, in a user function: a user's MLP with BayesianDropout
    (active in eval) and a BayesianModule around a second MLP whose posteriors start from its
    weights (PretrainedGaussianPosterior), each sampled 4 times (Monte Carlo mean and variance of
    the softmax), `enable_mc_dropout` on a plain model with nn.Dropout, and the BayesianModule's
    KL summed and approximated by 4 Monte Carlo samples (torchbayesian warns that an analytic one
    exists); 5 inputs of 6 features, 3 classes."""
    import torch
    from torchbayesian.bnn import BayesianDropout, BayesianModule
    from torchbayesian.bnn.utils import enable_mc_dropout

    torch.manual_seed(0)
    cfg = dict(features=6, hidden=16, classes=3, batch=5, dropout=0.2, mc_samples=4,
               posterior="pretrained_gaussian", kl=dict(reduction="sum", approx_num_samples=4))
    mcd = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), BayesianDropout(0.2),
                              torch.nn.Linear(16, 3)).eval()
    bnn = BayesianModule(torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3)),
                         variational_posterior="pretrained_gaussian").eval()
    plain = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Dropout(0.2),
                                torch.nn.Linear(16, 3)).eval()
    enable_mc_dropout(plain)

    def predict(x):
        out = []
        for model in (mcd, bnn, plain):
            probs = torch.stack([model(x).softmax(-1) for _ in range(4)])
            out.append((probs.mean(0), probs.var(0)))
        return out, bnn.kl_divergence(reduction="sum", approx_num_samples=4)
    g = torch.Generator().manual_seed(1)
    return cfg, predict, {"x": torch.randn(5, 6, generator=g)}


def _cgd_gan():
    import torch

    torch.manual_seed(0)
    gen = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    disc = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    return gen, disc


def _torch_cgd_acgd_gan_train():
    """torch-cgd's ACGD (adaptive competitive gradient descent) training a user's tiny GAN: two
    steps of the zero-sum game (softplus losses of the discriminator on real and generated
    samples), each step's Hessian-vector products through its Operator solved by GMRES
    (Arnoldi iterations with Givens rotations, at most 8, to a relative tolerance of 1e-6) and the
    parameters updated in place, in a user function; 8 latent and 8 real samples of 2 features."""
    import torch
    from torch_cgd import ACGD
    from torch_cgd.solvers import GMRES

    cfg = dict(latent=2, hidden=4, batch=8, lr=1e-2, beta=0.9, eps=1e-3, solver=dict(GMRES=dict(tol=1e-6, max_iter=8)),
               steps=2)
    gen, disc = _cgd_gan()
    opt = ACGD(gen.parameters(), disc.parameters(), lr=1e-2, solver=GMRES(tol=1e-6, max_iter=8))

    def train(z, real):
        out = []
        for _ in range(2):
            opt.zero_grad()
            f = (torch.nn.functional.softplus(disc(real)).mean()
                 - torch.nn.functional.softplus(disc(gen(z))).mean())
            opt.step(f)
            out.append(f.detach())
        return out, _params_of(gen), _params_of(disc)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"z": torch.randn(8, 2, generator=g), "real": torch.randn(8, 2, generator=g) + 1.0}


def _torch_cgd_games():
    """torch-cgd's other solvers on small games, in a user function: CGD (the mixed Hessians built
    row by row with `autograd.grad`, the linear systems solved with `torch.linalg`) on a general-sum
    game of two 3-parameter players, CGD_CG (its CG solver on Hessian-vector products, tolerance
    1e-8) on a zero-sum bilinear game, and ACGD with the CG solver (tolerance 1e-6) on a user's tiny
    GAN; one step each."""
    import torch
    from torch_cgd import ACGD, CGD, CGD_CG
    from torch_cgd.solvers import CG

    torch.manual_seed(0)
    cfg = dict(players=(3, 3), cgd=dict(learning_rate=0.1, solver="torch.linalg"),
               cgd_cg=dict(learning_rate=0.1, solver=dict(CG=dict(tol=1e-8))), acgd=dict(lr=1e-2, solver=dict(CG=dict(tol=1e-6))))
    a, b = torch.nn.Parameter(torch.randn(3)), torch.nn.Parameter(torch.randn(3))
    c, d = torch.nn.Parameter(torch.randn(3)), torch.nn.Parameter(torch.randn(3))
    cgd = CGD([a], [b], learning_rate=0.1)
    cgd_cg = CGD_CG([c], [d], learning_rate=0.1, solver=CG(tol=1e-8))
    gen, disc = _cgd_gan()
    acgd = ACGD(gen.parameters(), disc.parameters(), lr=1e-2, solver=CG(tol=1e-6))

    def play(M, z, real):
        f = a @ M @ b + (a ** 2).sum() * 0.5
        g_ = -(a @ M @ b) + (b ** 2).sum() * 0.5 + (a * b).sum()
        cgd.step(f, g_)
        h = c @ M @ d
        cgd_cg.step(h, -h)
        acgd.zero_grad()
        loss = torch.nn.functional.softplus(disc(real)).mean() - torch.nn.functional.softplus(disc(gen(z))).mean()
        acgd.step(loss)
        return (f.detach(), h.detach(), loss.detach(), a.detach().clone(), b.detach().clone(), c.detach().clone(),
                d.detach().clone(), _params_of(gen), _params_of(disc))
    g = torch.Generator().manual_seed(1)
    return cfg, play, {"M": torch.randn(3, 3, generator=g), "z": torch.randn(8, 2, generator=g),
                       "real": torch.randn(8, 2, generator=g) + 1.0}


# round 27: torch-kf 0.4.3, torchrbf 1.0.0, torchdr 0.5, torch-optimi 0.3.3 and
# torch-levenberg-marquardt 1.2.3, code nobody tuned on, measured before anything was changed for it


def _torch_kf_filter_smooth():
    """torch-kf's constant-velocity Kalman filter (2-d positions, `constant_kalman_filter`) as its
    README tracks a batch of signals: `filter` over 6 time steps of 4 noisy tracks, two of whose
    measurements are NaN at some steps (those states not updated: the masked update path),
    `return_all=True`, then the Rauch-Tung-Striebel smoother (`rts_smooth`); in a user function."""
    import torch
    from torch_kf import GaussianState
    from torch_kf.ckf import constant_kalman_filter

    cfg = dict(dim=2, order=1, measurement_std=0.5, process_std=0.1, steps=6, tracks=4, nan=[(1, 0), (3, 2)])
    kf = constant_kalman_filter(0.5, 0.1, dim=2, order=1)

    def track(measures, init):
        state = GaussianState(torch.cat([init, torch.zeros(4, 2, 1)], dim=1),
                              torch.eye(4).expand(4, 4, 4) * 10.0)
        filtered = kf.filter(state, measures, update_first=True, return_all=True)
        smoothed = kf.rts_smooth(filtered)
        return filtered.mean, filtered.covariance, smoothed.mean, smoothed.covariance
    g = torch.Generator().manual_seed(1)
    truth = torch.cumsum(torch.randn(6, 4, 2, 1, generator=g) * 0.3, dim=0)
    measures = truth + 0.5 * torch.randn(6, 4, 2, 1, generator=g)
    measures[1, 0] = float("nan")
    measures[3, 2] = float("nan")
    return cfg, track, {"measures": measures, "init": measures[0].nan_to_num()}


def _torch_kf_association():
    """torch-kf's building blocks as a multi-object tracker uses them: a constant-acceleration model
    with the Joseph-form update and the transposed inverse (`joseph_update=True, inv_t=True`);
    `predict` of 5 tracks, `project` with the precision precomputed, the Mahalanobis distances
    and log-likelihoods of every track to 6 detections, a greedy assignment by the smallest
    distance gated at 3 sigma, `update` of the assigned tracks, and the steady-state covariance
    (`steady_state_covariance(n=3, predicted=True)`); in a user function."""
    import torch
    from torch_kf import GaussianState, KalmanFilter
    from torch_kf.ckf import constant_kalman_filter

    cfg = dict(dim=2, order=2, measurement_std=0.3, process_std=0.2, joseph_update=True, inv_t=True, tracks=5,
               detections=6, gate=3.0)
    base = constant_kalman_filter(0.3, 0.2, dim=2, order=2)
    kf = KalmanFilter(base.process_matrix, base.measurement_matrix, base.process_noise, base.measurement_noise,
                      joseph_update=True, inv_t=True)

    def associate(mean, detections):
        state = GaussianState(mean, torch.eye(6).expand(5, 6, 6).clone())
        state = kf.predict(state)
        proj = kf.project(state, precompute_precision=True)
        dist = proj[:, None].mahalanobis(detections[None])
        ll = proj[:, None].log_likelihood(detections[None])
        best = dist.argmin(dim=1)
        matched = dist.gather(1, best[:, None])[:, 0] < 3.0
        updated = kf.update(state[matched], detections[best[matched]], projection=proj[matched])
        state[matched] = updated
        return state.mean, state.covariance, dist, ll, kf.steady_state_covariance(n=3, predicted=True)
    g = torch.Generator().manual_seed(1)
    mean = torch.randn(5, 6, 1, generator=g)
    det = torch.cat([mean[:4, :2] + 0.2 * torch.randn(4, 2, 1, generator=g), 10 * torch.randn(2, 2, 1, generator=g)])
    return cfg, associate, {"mean": mean, "detections": det}


def _torchrbf_global_grad():
    """torchrbf's RBFInterpolator as scipy's RBFInterpolator is used, with the whole system solved at
    construction: a thin-plate spline with a degree-1 polynomial and smoothing 1e-3, and a
    Gaussian kernel (epsilon 2, degree 0), each built from 30 scattered 2-d samples of a
    function with 2 outputs and evaluated at 10 query points, plus the gradient of the spline's
    interpolant with respect to the query points (autograd through `forward`); in a user
    function, float64."""
    import torch
    from torchrbf import RBFInterpolator

    cfg = dict(samples=30, ndim=2, outputs=2, queries=10,
               tps=dict(kernel="thin_plate_spline", degree=1, smoothing=1e-3),
               gaussian=dict(kernel="gaussian", epsilon=2.0, degree=0), dtype="float64")

    def interpolate(y, d, x):
        tps = RBFInterpolator(y, d, kernel="thin_plate_spline", degree=1, smoothing=1e-3)
        gau = RBFInterpolator(y, d, kernel="gaussian", epsilon=2.0, degree=0)
        xq = x.clone().requires_grad_(True)
        out = tps(xq)
        (grad,) = torch.autograd.grad(out.sum(), xq)
        return out.detach(), gau(x), grad
    g = torch.Generator().manual_seed(1)
    y = torch.rand(30, 2, generator=g, dtype=torch.float64)
    d = torch.stack([torch.sin(3 * y[:, 0]) * y[:, 1], torch.cos(2 * y[:, 1])], dim=1)
    return cfg, interpolate, {"y": y, "d": d, "x": torch.rand(10, 2, generator=g, dtype=torch.float64)}


def _torchrbf_neighbors():
    """torchrbf's local RBFInterpolator (`neighbors=6`): the nearest neighbours found by scipy's KD
    tree (the default backend, queried on a numpy copy) for a multiquadric kernel (epsilon 1.5,
    degree 1), and by `torch.cdist` with `topk` ('torch_dense') for a quintic kernel without a
    polynomial (degree -1) and per-sample smoothing; each query's local system built and solved
    in a batch; 40 scattered 3-d samples of a scalar function, 8 query points, in a user
    function, float64."""
    import torch
    from torchrbf import RBFInterpolator

    cfg = dict(samples=40, ndim=3, queries=8, neighbors=6,
               kdtree=dict(kernel="multiquadric", epsilon=1.5, degree=1, neighbors_backend="scipy"),
               dense=dict(kernel="quintic", degree=-1, neighbors_backend="torch_dense", smoothing="per-sample 1e-4"))
    g = torch.Generator().manual_seed(1)
    y = torch.rand(40, 3, generator=g, dtype=torch.float64)
    d = (y ** 2).sum(dim=1, keepdim=True) + torch.sin(4 * y[:, :1])
    kd = RBFInterpolator(y, d, neighbors=6, kernel="multiquadric", epsilon=1.5, degree=1)
    dense = RBFInterpolator(y, d, neighbors=6, neighbors_backend="torch_dense", kernel="quintic", degree=-1,
                            smoothing=torch.full((40,), 1e-4, dtype=torch.float64))

    def interpolate(x):
        return kd(x), dense(x)
    return cfg, interpolate, {"x": torch.rand(8, 3, generator=g, dtype=torch.float64)}


def _torchdr_points():
    import torch

    g = torch.Generator().manual_seed(1)
    y = torch.arange(30) % 3
    return torch.randn(30, 5, generator=g) + 2.0 * y[:, None], y


def _torchdr_affinities():
    """torchdr's affinities as its neighbour embeddings compute them, on 30 points of 5 features in
    3 shifted clusters: EntropicAffinity (perplexity 5, dense: the per-point bandwidths found by
    torchdr's binary search on the entropy), SinkhornAffinity (eps 1, the doubly stochastic
    scaling iterated to its tolerance), UMAPAffinity (5 neighbours, dense: the bandwidths
    root-searched on the sum of memberships), SelfTuningAffinity (K 5) and
    NormalizedGaussianAffinity (sigma 1), each called on the points in a user function."""
    import torchdr

    cfg = dict(points=30, features=5, clusters=3, entropic=dict(perplexity=5, sparsity=False),
               sinkhorn=dict(eps=1.0), umap=dict(n_neighbors=5, sparsity=False), self_tuning=dict(K=5),
               normalized_gaussian=dict(sigma=1.0))
    affs = [torchdr.EntropicAffinity(perplexity=5, sparsity=False), torchdr.SinkhornAffinity(eps=1.0),
            torchdr.UMAPAffinity(n_neighbors=5, sparsity=False), torchdr.SelfTuningAffinity(K=5),
            torchdr.NormalizedGaussianAffinity(sigma=1.0)]

    def run(X):
        return [a(X) for a in affs]
    X, _ = _torchdr_points()
    return cfg, run, {"X": X}


def _torchdr_tsne_umap_eval():
    """torchdr's neighbour embeddings as its README runs them, then its evaluation metrics: TSNE
    (perplexity 5, PCA init, 20 iterations with early exaggeration, `random_state=0`) and UMAP
    (5 neighbours, 10 iterations of negative sampling, `random_state=0`), both with the torch
    backend (`backend=None`), `fit_transform` on 30 points of 5 features in 3 clusters, then
    `silhouette_score` of the t-SNE embedding, `knn_label_accuracy` (k 5) and the UMAP
    embedding's `neighborhood_preservation` (K 5); in a user function."""
    import torchdr

    cfg = dict(points=30, features=5, clusters=3, tsne=dict(perplexity=5, max_iter=20, random_state=0),
               umap=dict(n_neighbors=5, max_iter=10, random_state=0), backend=None, k=5)
    tsne = torchdr.TSNE(n_components=2, perplexity=5, max_iter=20, random_state=0, backend=None)
    umap = torchdr.UMAP(n_neighbors=5, max_iter=10, random_state=0, backend=None)

    def embed(X, y):
        z = tsne.fit_transform(X)
        z2 = umap.fit_transform(X)
        return (z, z2, torchdr.silhouette_score(z, y), torchdr.knn_label_accuracy(z, y, k=5, backend=None),
                torchdr.neighborhood_preservation(X, z2, K=5))
    X, y = _torchdr_points()
    return cfg, embed, {"X": X, "y": y}


def _optimi_adan_ranger_train():
    """torch-optimi's Adan (weight decay, the for-loop implementation) and Ranger (RAdam with
    lookahead every 2 steps, decoupled weight decay) on two copies of a user's MLP, three
    training steps each (MSE, backward, `optimizer.step()`, `zero_grad`) in a user function;
    batch 8 of 6 features."""
    import torch
    from optimi import Adan, Ranger

    cfg = dict(features=6, hidden=16, batch=8, adan=dict(lr=1e-2, weight_decay=1e-2, foreach=False),
               ranger=dict(lr=1e-2, k=2, weight_decay=1e-2, foreach=False), steps=3)
    m1, m2 = _sf_model(), _sf_model()
    o1 = Adan(m1.parameters(), lr=1e-2, weight_decay=1e-2, foreach=False)
    o2 = Ranger(m2.parameters(), lr=1e-2, k=2, weight_decay=1e-2, foreach=False)

    def train(x, y):
        out = []
        for m, o in ((m1, o1), (m2, o2)):
            for _ in range(3):
                loss = torch.nn.functional.mse_loss(m(x), y)
                loss.backward()
                o.step()
                o.zero_grad()
                out.append(loss.detach())
        return out, _params_of(m1), _params_of(m2)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randn(8, 1, generator=g)}


def _optimi_stableadamw_bf16():
    """torch-optimi's low-precision training as its docs describe it: StableAdamW on a user's MLP in
    bfloat16 (Kahan summation switched on automatically, the foreach implementation, the
    per-tensor update clipping by the RMS of grad^2/v), RAdam (decoupled weight decay, `max_lr`
    with `decouple_lr`) and Lion on float32 copies, two training steps each, in a user function;
    batch 8 of 6 features."""
    import torch
    from optimi import RAdam, Lion, StableAdamW

    cfg = dict(features=6, hidden=16, batch=8, stableadamw=dict(lr=1e-2, foreach=True, dtype="bfloat16"),
               radam=dict(lr=1e-2, weight_decay=1e-3, decouple_wd=True, decouple_lr=True, max_lr=1e-2),
               lion=dict(lr=1e-3, weight_decay=1e-2), steps=2)
    m1, m2, m3 = _sf_model().to(torch.bfloat16), _sf_model(), _sf_model()
    o1 = StableAdamW(m1.parameters(), lr=1e-2, foreach=True)
    o2 = RAdam(m2.parameters(), lr=1e-2, weight_decay=1e-3, decouple_wd=True, decouple_lr=True, max_lr=1e-2)
    o3 = Lion(m3.parameters(), lr=1e-3, weight_decay=1e-2)

    def train(x, y):
        out = []
        for m, o in ((m1, o1), (m2, o2), (m3, o3)):
            for _ in range(2):
                xm = x.to(next(m.parameters()).dtype)
                loss = torch.nn.functional.mse_loss(m(xm).float(), y)
                loss.backward()
                o.step()
                o.zero_grad()
                out.append(loss.detach())
        return out, _params_of(m1), _params_of(m2), _params_of(m3)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(8, 6, generator=g), "y": torch.randn(8, 1, generator=g)}


def _lm_regression_train():
    """torch-levenberg-marquardt's LevenbergMarquardtModule as its README fits a curve: a user's
    small MLP (1-8-1, tanh) on 20 samples of a noisy sine, MSE residuals, the Jacobian per sample
    by `vmap(jacrev(...))` of a `functional_call`, the Gauss-Newton system J'J (overdetermined)
    solved by QR with the standard damping strategy, up to 10 attempts per step (the damping
    raised after a rejected update, the loss compared before accepting); three
    `training_step`s in a user function."""
    import torch
    from torch_levenberg_marquardt.training import LevenbergMarquardtModule

    torch.manual_seed(0)
    cfg = dict(model="1-8-1 tanh", samples=20, solve_method="qr", attempts_per_step=10, use_vmap=True, steps=3)
    model = torch.nn.Sequential(torch.nn.Linear(1, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    lm = LevenbergMarquardtModule(model)

    def fit(x, y):
        out = []
        for _ in range(3):
            outputs, loss, stop, logs = lm.training_step(x, y)
            out.append((loss, stop, logs["damping"], logs["attempts"]))
        return out, lm.flat_params.clone()
    g = torch.Generator().manual_seed(1)
    x = torch.linspace(-2, 2, 20)[:, None]
    return cfg, fit, {"x": x, "y": torch.sin(2 * x) + 0.05 * torch.randn(20, 1, generator=g)}


def _lm_classifier_sliced_train():
    """torch-levenberg-marquardt on a classifier with its memory options: a user's MLP (4-6-3) on
    cross entropy (`CrossEntropyLoss`, residuals through `LossWrapper`), a random subset of 20
    parameters selected per step (`RandomSelectionStrategy`), the batch of 12 sliced by 4
    (`max_batch_size`) so that the under-determined system J J' is assembled slice by slice,
    the Jacobian by `jacrev` without vmap, solved by Cholesky; a second module on MSE with the
    over-determined sliced path (`solve` method); two `training_step`s each, in a user
    function."""
    import torch
    from torch_levenberg_marquardt.loss import CrossEntropyLoss, MSELoss
    from torch_levenberg_marquardt.selection import RandomSelectionStrategy
    from torch_levenberg_marquardt.training import LevenbergMarquardtModule

    torch.manual_seed(0)
    cfg = dict(classifier=dict(model="4-6-3", batch=12, max_batch_size=4, subset=20, solve_method="cholesky",
                               use_vmap=False),
               regressor=dict(model="4-3-1", batch=12, max_batch_size=4, solve_method="solve"), steps=2)
    clf = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 3))
    reg = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
    lm_c = LevenbergMarquardtModule(clf, loss_fn=CrossEntropyLoss(), solve_method="cholesky", use_vmap=False,
                                    max_batch_size=4,
                                    param_selection_strategy=RandomSelectionStrategy(clf.parameters(), 20))
    lm_r = LevenbergMarquardtModule(reg, loss_fn=MSELoss(), solve_method="solve", max_batch_size=4)

    def fit(x, c, y):
        out = []
        for _ in range(2):
            out.append(lm_c.training_step(x, c)[1:3])
            out.append(lm_r.training_step(x, y)[1:3])
        return out, lm_c.flat_params.clone(), lm_r.flat_params.clone()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(12, 4, generator=g)
    return cfg, fit, {"x": x, "c": torch.randint(0, 3, (12,), generator=g),
                      "y": x[:, :1] * x[:, 1:2] + 0.1 * torch.randn(12, 1, generator=g)}


# round 28: pytorch-wavelets 1.3.0, tntorch 1.1.2, torch-interpol 0.3.0, torchnmf 0.3.5 and
# torch-linode 0.3.0, code nobody tuned on, measured before anything was changed for it


def _pytorch_wavelets_dwt_roundtrip():
    """pytorch_wavelets' discrete wavelet transforms as its README runs them: a 2-level 2-d DWT
    (`DWTForward(J=2, wave='db3', mode='zero')`) of a batch of 2 three-channel 16x16 images, the
    detail bands soft-thresholded (wavelet shrinkage) and the image rebuilt by `DWTInverse`; a
    3-level 1-d DWT (`DWT1DForward`, 'db2', symmetric padding) of 64-sample signals and its
    inverse; in a user function."""
    import torch
    from pytorch_wavelets import DWT1DForward, DWT1DInverse, DWTForward, DWTInverse

    cfg = dict(dwt2=dict(J=2, wave="db3", mode="zero"), dwt1=dict(J=3, wave="db2", mode="symmetric"),
               image=(2, 3, 16, 16), signal=(2, 3, 64), threshold=0.1)
    xfm, ifm = DWTForward(J=2, wave="db3", mode="zero"), DWTInverse(wave="db3", mode="zero")
    xfm1, ifm1 = DWT1DForward(J=3, wave="db2", mode="symmetric"), DWT1DInverse(wave="db2", mode="symmetric")

    def denoise(img, sig):
        yl, yh = xfm(img)
        yh = [torch.sign(h) * torch.relu(h.abs() - 0.1) for h in yh]
        lo, hi = xfm1(sig)
        return ifm((yl, yh)), lo, hi, ifm1((lo, hi))
    g = torch.Generator().manual_seed(1)
    return cfg, denoise, {"img": torch.randn(2, 3, 16, 16, generator=g), "sig": torch.randn(2, 3, 64, generator=g)}


def _pytorch_wavelets_dtcwt_scat_train():
    """pytorch_wavelets' dual-tree complex wavelet transform and scattering layers in a small
    classifier's training step: `DTCWTForward(J=2, biort='near_sym_b', qshift='qshift_b')` and
    `DTCWTInverse` (the reconstruction error as an auxiliary loss), a `ScatLayer` (first-order
    scattering, 'near_sym_a') feeding a 1x1 conv and a linear head; cross entropy plus the
    reconstruction MSE, backward, SGD step, in a user function; batch 2 of 3x16x16."""
    import torch
    from pytorch_wavelets import DTCWTForward, DTCWTInverse, ScatLayer

    torch.manual_seed(0)
    cfg = dict(dtcwt=dict(J=2, biort="near_sym_b", qshift="qshift_b"), scat=dict(biort="near_sym_a"),
               image=(2, 3, 16, 16), classes=4, lr=1e-2)
    fwd = DTCWTForward(J=2, biort="near_sym_b", qshift="qshift_b")
    inv = DTCWTInverse(biort="near_sym_b", qshift="qshift_b")
    scat = ScatLayer(biort="near_sym_a")
    head = torch.nn.Sequential(torch.nn.Conv2d(21, 8, 1), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(8 * 8 * 8, 4))
    opt = torch.optim.SGD(head.parameters(), lr=1e-2)

    def train(x, y):
        yl, yh = fwd(x)
        recon = inv((yl, yh))
        logits = head(scat(x))
        loss = torch.nn.functional.cross_entropy(logits, y) + torch.nn.functional.mse_loss(recon, x)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach(), recon.detach(), _params_of(head)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(2, 3, 16, 16, generator=g), "y": torch.tensor([0, 3])}


def _tntorch_tt_decompose():
    """tntorch's tensor-train format as its tutorials use it: a 6x6x6x6 tensor decomposed by TT-SVD
    (`tn.Tensor(full, ranks_tt=3)`), decompressed (`.torch()`), its relative error, norm and
    `tn.dot` with itself, then `round_tt(eps=1e-2)` of the sum of two TT tensors, an element read
    `t[1, 2, 3, 4]` and a slice `t[:, 0, :, 1]`; in a user function."""
    import torch
    import tntorch as tn

    cfg = dict(shape=(6, 6, 6, 6), ranks_tt=3, round_eps=1e-2)

    def decompose(full):
        t = tn.Tensor(full, ranks_tt=3)
        s = t + tn.Tensor(full * 0.5, ranks_tt=2)
        s.round_tt(eps=1e-2)
        return (t.torch(), tn.relative_error(full, t), tn.norm(t), tn.dot(t, t), s.torch(), t[1, 2, 3, 4],
                t[:, 0, :, 1].torch())
    g = torch.Generator().manual_seed(1)
    return cfg, decompose, {"full": torch.randn(6, 6, 6, 6, generator=g)}


def _tntorch_tucker_cp_metrics():
    """tntorch's Tucker and CP formats and its metrics: `tn.Tensor(full, ranks_tucker=3)` (HOSVD)
    and `tn.Tensor(full, ranks_cp=3)` (CP-ALS), each decompressed, their relative errors, the
    product of the two (`t1 * t2`), `tn.mean`, `tn.sum` over a dimension and `tn.dist`; in a user
    function, a 5x6x7 tensor."""
    import torch
    import tntorch as tn

    cfg = dict(shape=(5, 6, 7), ranks_tucker=3, ranks_cp=3)

    def decompose(full):
        t1 = tn.Tensor(full, ranks_tucker=3)
        t2 = tn.Tensor(full, ranks_cp=3)
        p = t1 * t2
        return (t1.torch(), t2.torch(), tn.relative_error(full, t1), tn.relative_error(full, t2), p.torch(),
                tn.mean(t1), tn.sum(t2, dim=1).torch(), tn.dist(t1, t2))
    g = torch.Generator().manual_seed(1)
    return cfg, decompose, {"full": torch.randn(5, 6, 7, generator=g)}


def _interpol_spline_pull():
    """torch-interpol's spline interpolation as its README samples an image: cubic B-spline
    coefficients (`spline_coeff_nd`, DCT-II boundary), `grid_pull` at 5x5 sampling points of a
    2-channel 8x8 image, the spatial gradient there (`grid_grad`, quadratic), and an
    `identity_grid` plus a smooth displacement pulled with linear interpolation and zero
    boundary; in a user function."""
    import torch
    import interpol

    cfg = dict(image=(1, 2, 8, 8), points=(5, 5), coeff=dict(interpolation=3, bound="dct2"),
               grad=dict(interpolation=2, bound="dct2"), warp=dict(interpolation=1, bound="zero"))

    def sample(img, grid, disp):
        c = interpol.spline_coeff_nd(img, interpolation=3, bound="dct2", dim=2)
        v = interpol.grid_pull(c, grid, interpolation=3, bound="dct2")
        d = interpol.grid_grad(img, grid, interpolation=2, bound="dct2")
        warp = interpol.identity_grid((8, 8))[None] + disp
        return v, d, interpol.grid_pull(img, warp, interpolation=1, bound="zero")
    g = torch.Generator().manual_seed(1)
    return cfg, sample, {"img": torch.randn(1, 2, 8, 8, generator=g), "grid": torch.rand(1, 5, 5, 2, generator=g) * 7,
                         "disp": 0.5 * torch.randn(1, 8, 8, 2, generator=g)}


def _interpol_register_train():
    """torch-interpol in a registration step: a learnable 8x8 displacement field (an `nn.Parameter`)
    added to the identity grid, the moving image pulled with cubic interpolation (`grid_pull`,
    DCT-II boundary, extrapolate), the MSE to the fixed image plus a smoothness penalty,
    backward (interpol's autograd functions), Adam step; then `grid_push` (the adjoint, splat
    to 8x8), `grid_count` and `resize` by 2 (linear, no prefilter) of the result; in a user
    function."""
    import torch
    import interpol

    torch.manual_seed(0)
    cfg = dict(image=(1, 1, 8, 8), pull=dict(interpolation=3, bound="dct2", extrapolate=True), lr=1e-2,
               push=dict(interpolation=1, shape=(8, 8)), resize=dict(factor=2, interpolation=1, prefilter=False))
    disp = torch.nn.Parameter(torch.zeros(1, 8, 8, 2))
    opt = torch.optim.Adam([disp], lr=1e-2)

    def register(moving, fixed):
        grid = interpol.identity_grid((8, 8))[None] + disp
        warped = interpol.grid_pull(moving, grid, interpolation=3, bound="dct2", extrapolate=True)
        loss = torch.nn.functional.mse_loss(warped, fixed) + 0.1 * (disp[:, 1:] - disp[:, :-1]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        g = grid.detach()
        pushed = interpol.grid_push(warped.detach(), g, shape=(8, 8), interpolation=1)
        count = interpol.grid_count(g, shape=(8, 8), interpolation=1)
        return loss.detach(), pushed, count, interpol.resize(warped.detach(), factor=2, interpolation=1,
                                                             prefilter=False), disp.detach().clone()
    g = torch.Generator().manual_seed(1)
    moving = torch.randn(1, 1, 8, 8, generator=g)
    return cfg, register, {"moving": moving, "fixed": moving.roll(1, dims=-1)}


def _torchnmf_nmf_fit():
    """torchnmf's NMF as its README decomposes a spectrogram-like matrix: `NMF(V.shape, rank=4)` fit
    by the multiplicative updates (`fit`, beta 2, Euclidean, 6 iterations) and a second model on
    the KL divergence (beta 1) with L1/L2 regularization (`alpha=0.1, l1_ratio=0.5`); the
    reconstruction `model()` of each; a 20x30 non-negative matrix, in a user function."""
    import torch
    from torchnmf.nmf import NMF

    cfg = dict(V=(20, 30), rank=4, euclid=dict(beta=2, max_iter=6), kl=dict(beta=1, max_iter=6, alpha=0.1, l1_ratio=0.5))
    torch.manual_seed(0)
    m1, m2 = NMF((20, 30), rank=4), NMF((20, 30), rank=4)

    def factorize(V):
        n1 = m1.fit(V, beta=2, max_iter=6)
        n2 = m2.fit(V, beta=1, max_iter=6, alpha=0.1, l1_ratio=0.5)
        with torch.no_grad():
            return n1, n2, m1(), m2(), m1.W.clone(), m2.H.clone()
    g = torch.Generator().manual_seed(1)
    return cfg, factorize, {"V": torch.rand(20, 30, generator=g)}


def _torchnmf_nmfd_plca_fit():
    """torchnmf's convolutive and probabilistic models: `NMFD` (rank 3, 4-frame templates) fit on a
    batch of 2 6x20 non-negative sequences (beta 1, 4 iterations), and `PLCA` (rank 4, the EM
    updates) fit on a 20x30 matrix (5 iterations); in a user function."""
    import torch
    from torchnmf.nmf import NMFD
    from torchnmf.plca import PLCA

    cfg = dict(nmfd=dict(V=(2, 6, 20), rank=3, T=4, beta=1, max_iter=4), plca=dict(V=(20, 30), rank=4, max_iter=5))
    torch.manual_seed(0)
    m = NMFD((2, 6, 20), rank=3, T=4)
    p = PLCA((20, 30), rank=4)

    def factorize(S, V):
        n1 = m.fit(S, beta=1, max_iter=4)
        n2 = p.fit(V, max_iter=5)
        with torch.no_grad():
            return n1, n2, m(), p(), m.W.clone(), p.H.clone()
    g = torch.Generator().manual_seed(1)
    return cfg, factorize, {"S": torch.rand(2, 6, 20, generator=g), "V": torch.rand(20, 30, generator=g)}


def _linode_magnus():
    """torch-linode's Magnus integrators as its README solves dy/dt = A(t) y: a batch of 2 3-d states
    under A(t) = A0 cos(t) (a function with `params`), adaptive 4th-order Magnus at 4 time points
    (`odeint(..., method='magnus', order=4)`), 6th order on the non-homogeneous system (A(t), g(t))
    and the dense output of the 2nd-order solve evaluated at 3 interior times; in a user function."""
    import torch
    from torch_linode import odeint

    cfg = dict(batch=2, dim=3, t=(0.0, 1.0, 4), magnus4=dict(order=4, rtol=1e-4, atol=1e-6),
               magnus6=dict(order=6, rtol=1e-4, atol=1e-6, forcing=True), dense=dict(order=2, at=3))

    def sys_a(t, params):
        A = params.view(*params.shape[:-2], *((1,) * t.ndim), *params.shape[-2:])
        return A * torch.cos(t)[..., None, None]

    def sys_ag(t, params):
        A_t = sys_a(t, params)
        return A_t, torch.sin(t)[..., None].expand(A_t.shape[:-1])

    def solve(y0, A0):
        t = torch.linspace(0, 1, 4)
        y4 = odeint(sys_a, y0, t, params=A0, method="magnus", order=4, rtol=1e-4, atol=1e-6)
        y6 = odeint(sys_ag, y0, t, params=A0, method="magnus", order=6, rtol=1e-4, atol=1e-6)
        dense = odeint(sys_a, y0, t, params=A0, method="magnus", order=2, rtol=1e-4, atol=1e-6, dense_output=True)
        return y4, y6, dense(torch.tensor([0.25, 0.5, 0.75]))
    g = torch.Generator().manual_seed(1)
    return cfg, solve, {"y0": torch.randn(2, 3, generator=g), "A0": 0.5 * torch.randn(2, 3, 3, generator=g)}


def _linode_adjoint_train():
    """torch-linode's adjoint method in a fit, as its README learns a system: an `nn.Module` whose
    A(t) = W0 + t W1 (learnable), `odeint_adjoint` (4th-order Magnus, Gauss-Kronrod quadrature
    for the parameter gradients) from a 3-d state over 3 time points, MSE to targets,
    backward, Adam step, in a user function."""
    import torch
    from torch_linode import odeint_adjoint

    torch.manual_seed(0)
    cfg = dict(dim=3, t=(0.0, 1.0, 3), order=4, quad_method="gk", lr=1e-2)

    class System(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.W0 = torch.nn.Parameter(0.3 * torch.randn(3, 3))
            self.W1 = torch.nn.Parameter(0.1 * torch.randn(3, 3))

        def forward(self, t):
            W0 = self.W0.view(*((1,) * t.ndim), 3, 3)
            return W0 + t[..., None, None] * self.W1.view(*((1,) * t.ndim), 3, 3)
    sys_ = System()
    opt = torch.optim.Adam(sys_.parameters(), lr=1e-2)

    def train(y0, target):
        traj = odeint_adjoint(sys_, y0, torch.linspace(0, 1, 3), order=4, rtol=1e-4, atol=1e-6)
        loss = torch.nn.functional.mse_loss(traj, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach(), traj.detach(), _params_of(sys_)
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"y0": torch.randn(3, generator=g), "target": torch.randn(3, 3, generator=g)}


# round 29: xitorch 0.5.1, torch-pme 0.5.0, pycox 0.3.0, torch-hd 5.8.4 and pytorch-kinematics
# 0.10.0, code nobody tuned on, measured before anything was changed for it


def _xitorch_root_ivp_interp():
    """xitorch's functionals as its README and tutorials call them: `rootfinder` of
    tanh(A y) - y + 0.1 = 0 for a 3-vector (Broyden, the default), `minimize` of a quadratic,
    `solve_ivp` of dy/dt = -k y at 5 times with fixed-step RK4 and adaptive RK45, a cubic-spline
    and a linear `Interp1D` at 5 query points, and `symeig` (2 lowest) and `solve` of a Hermitian
    `LinearOperator.m`; in a user function."""
    import torch
    from xitorch import LinearOperator
    from xitorch.integrate import solve_ivp
    from xitorch.interpolate import Interp1D
    from xitorch.linalg import solve, symeig
    from xitorch.optimize import minimize, rootfinder

    cfg = dict(root=dict(dim=3), ivp=dict(t=(0.0, 1.0, 5), methods=("rk4", "rk45")), interp=dict(n=8, q=5,
               methods=("cspline", "linear")), symeig=dict(n=5, neig=2, mode="lowest"))

    def fcn(y, A):
        return torch.tanh(A @ y) - y + 0.1

    def quad(y, A):
        return ((A @ y - 1.0) ** 2).sum()

    def dyn(t, y, k):
        return -k * y

    def run(A, y0, k, x, y, xq, M, b):
        root = rootfinder(fcn, y0, params=(A,))
        ymin = minimize(quad, y0, params=(A,), method="gd", step=0.1, maxiter=20)
        ts = torch.linspace(0, 1, 5)
        y4 = solve_ivp(dyn, ts, root[:, 0], params=(k,), method="rk4")
        y45 = solve_ivp(dyn, ts, root[:, 0], params=(k,), method="rk45")
        cs, lin = Interp1D(x, y, method="cspline")(xq), Interp1D(x, y, method="linear")(xq)
        op = LinearOperator.m(M + M.T + 10 * torch.eye(5), is_hermitian=True)
        evals, evecs = symeig(op, neig=2, mode="lowest")
        return root, ymin, y4, y45, cs, lin, evals, solve(op, b)
    g = torch.Generator().manual_seed(1)
    return cfg, run, {"A": 0.3 * torch.randn(3, 3, generator=g), "y0": torch.zeros(3, 1), "k": torch.tensor(0.5),
                      "x": torch.linspace(0, 1, 8), "y": torch.randn(8, generator=g), "xq": torch.rand(5, generator=g),
                      "M": torch.randn(5, 5, generator=g), "b": torch.randn(5, 1, generator=g)}


def _xitorch_implicit_train():
    """xitorch's implicit gradients in a fit: a small net's weights parameterize the equilibrium
    y* = tanh(W y* + U x) found by `equilibrium` (Broyden), the state integrated by `solve_ivp`
    (RK4, 4 times) under dy/dt = tanh(W y) with the same W, MSE of both to targets, backward
    (xitorch's implicit-function and adjoint gradients), Adam step; in a user function."""
    import torch
    from xitorch.integrate import solve_ivp
    from xitorch.optimize import equilibrium

    torch.manual_seed(0)
    cfg = dict(dim=4, batch=1, ivp=dict(t=(0.0, 1.0, 4), method="rk4"), lr=1e-2)
    W = torch.nn.Parameter(0.2 * torch.randn(4, 4))
    U = torch.nn.Parameter(0.5 * torch.randn(4, 4))
    opt = torch.optim.Adam([W, U], lr=1e-2)

    def eq(y, W, U, x):
        return torch.tanh(W @ y + U @ x)

    def dyn(t, y, W):
        return torch.tanh(W @ y)

    def train(x, target):
        ystar = equilibrium(eq, torch.zeros(4, 1), params=(W, U, x))
        traj = solve_ivp(dyn, torch.linspace(0, 1, 4), ystar[:, 0], params=(W,), method="rk4")
        loss = torch.nn.functional.mse_loss(ystar[:, 0], target) + torch.nn.functional.mse_loss(traj[-1], target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach(), ystar.detach(), W.detach().clone(), U.detach().clone()
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(4, 1, generator=g), "target": 0.5 * torch.randn(4, generator=g)}


def _pme_points(n=8, box=4.0):
    import torch

    g = torch.Generator().manual_seed(1)
    pos = torch.rand(n, 3, generator=g) * box
    i, j = torch.triu_indices(n, n, 1)
    d = (pos[j] - pos[i]).norm(dim=1)
    keep = d < 0.5 * box
    charges = torch.tensor([1.0, -1.0] * (n // 2)).unsqueeze(1)
    return charges, box * torch.eye(3), pos, torch.stack([i, j], 1)[keep], d[keep]


def _torchpme_calculators():
    """torch-pme's long-range calculators as its README evaluates them: 8 alternating unit charges in
    a cubic 4 A cell with a half neighbour list within 2 A, the Coulomb potentials (smearing 0.5)
    by `EwaldCalculator` (lr_wavelength 1.0), `PMECalculator` (mesh spacing 0.5, 4 interpolation
    nodes) and `P3MCalculator` (mesh spacing 0.5), and an `InversePowerLawPotential` (exponent 2) by
    Ewald; the energy of each; in a user function."""
    import torchpme

    cfg = dict(atoms=8, box=4.0, cutoff=2.0, smearing=0.5, ewald=dict(lr_wavelength=1.0),
               pme=dict(mesh_spacing=0.5, interpolation_nodes=4), p3m=dict(mesh_spacing=0.5), ipl=dict(exponent=2))
    ewald = torchpme.EwaldCalculator(torchpme.CoulombPotential(smearing=0.5), lr_wavelength=1.0)
    pme = torchpme.PMECalculator(torchpme.CoulombPotential(smearing=0.5), mesh_spacing=0.5, interpolation_nodes=4)
    p3m = torchpme.P3MCalculator(torchpme.CoulombPotential(smearing=0.5), mesh_spacing=0.5)
    ipl = torchpme.EwaldCalculator(torchpme.InversePowerLawPotential(exponent=2, smearing=0.5), lr_wavelength=1.0)

    def potentials(charges, cell, positions, neighbor_indices, neighbor_distances):
        out = []
        for calc in (ewald, pme, p3m, ipl):
            pot = calc(charges, cell, positions, neighbor_indices, neighbor_distances)
            out += [pot, (charges * pot).sum()]
        return out
    ch, cell, pos, nl, d = _pme_points()
    return cfg, potentials, {"charges": ch, "cell": cell, "positions": pos, "neighbor_indices": nl,
                             "neighbor_distances": d}


def _torchpme_forces_train():
    """torch-pme in a fit, as its examples learn a potential mix: a `CombinedPotential` of Coulomb
    and inverse-power-law (exponent 2) potentials with learnable weights under a `PMECalculator`
    (mesh spacing 0.5), in float64 (the power law's exponent is a float64 buffer), the energy of
    8 charges, forces by `torch.autograd.grad` of the energy
    through the positions and distances (create_graph), the MSE of energy and forces to
    targets, backward, Adam step; in a user function."""
    import torch
    import torchpme

    torch.manual_seed(0)
    cfg = dict(atoms=8, box=4.0, cutoff=2.0, smearing=0.5, pme=dict(mesh_spacing=0.5), ipl=dict(exponent=2), lr=1e-2,
               dtype="float64")
    pot = torchpme.CombinedPotential([torchpme.CoulombPotential(smearing=0.5),
                                      torchpme.InversePowerLawPotential(exponent=2, smearing=0.5)],
                                     initial_weights=torch.tensor([1.0, 0.5], dtype=torch.float64),
                                     learnable_weights=True, smearing=0.5)
    calc = torchpme.PMECalculator(pot, mesh_spacing=0.5).to(torch.float64)
    opt = torch.optim.Adam(calc.parameters(), lr=1e-2)

    def train(charges, cell, positions, neighbor_indices, e_ref, f_ref):
        positions = positions.detach().requires_grad_(True)
        i, j = neighbor_indices[:, 0], neighbor_indices[:, 1]
        d = (positions[j] - positions[i]).norm(dim=1)
        energy = (charges * calc(charges, cell, positions, neighbor_indices, d)).sum()
        forces = -torch.autograd.grad(energy, positions, create_graph=True)[0]
        loss = (energy - e_ref) ** 2 + torch.nn.functional.mse_loss(forces, f_ref)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach(), energy.detach(), forces.detach(), _params_of(calc)
    ch, cell, pos, nl, _ = _pme_points()
    g = torch.Generator().manual_seed(2)
    return cfg, train, {"charges": ch.double(), "cell": cell.double(), "positions": pos.double(),
                        "neighbor_indices": nl, "e_ref": torch.tensor(-1.0, dtype=torch.float64),
                        "f_ref": 0.1 * torch.randn(8, 3, generator=g, dtype=torch.float64)}


def _pycox_losses_train():
    """pycox's discrete-time and Cox losses in a training step, as its notebooks train an MLP on
    tabular covariates: a 5-feature MLP with 6 outputs on a batch of 8, LogisticHazard's
    `NLLLogistiHazardLoss`, `NLLPMFLoss`, `NLLMTLRLoss`, DeepHit's `DeepHitSingleLoss` (alpha 0.2,
    sigma 0.1, with its rank matrix from `pair_rank_mat`) and CoxPH's `CoxPHLoss` on the first
    output; summed, backward, Adam step, in a user function."""
    import torch
    from pycox.models import loss as pl
    from pycox.models.data import pair_rank_mat

    torch.manual_seed(0)
    cfg = dict(features=5, durations=6, batch=8, hidden=16, deephit=dict(alpha=0.2, sigma=0.1), lr=1e-2)
    net = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.ReLU(), torch.nn.Linear(16, 6))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    lh, pmf, mtlr = pl.NLLLogistiHazardLoss(), pl.NLLPMFLoss(), pl.NLLMTLRLoss()
    dh, cox = pl.DeepHitSingleLoss(alpha=0.2, sigma=0.1), pl.CoxPHLoss()

    def train(x, idx_durations, events, durations, rank_mat):
        phi = net(x)
        loss = (lh(phi, idx_durations, events) + pmf(phi, idx_durations, events) + mtlr(phi, idx_durations, events)
                + dh(phi, idx_durations, events, rank_mat) + cox(phi[:, 0], durations, events))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach(), _params_of(net)
    g = torch.Generator().manual_seed(1)
    idx = torch.randint(0, 6, (8,), generator=g)
    ev = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0])
    rank = torch.from_numpy(pair_rank_mat(idx.numpy(), ev.numpy())).float()
    return cfg, train, {"x": torch.randn(8, 5, generator=g), "idx_durations": idx, "events": ev,
                        "durations": idx.float() + torch.rand(8, generator=g), "rank_mat": rank}


def _pycox_cr_coxtime_train():
    """pycox's competing-risk, piecewise-constant and case-control models in a training step:
    `MLPVanillaCoxTime` (5 features plus time, 16 hidden, batch norm) scored on cases and sampled
    controls under `CoxCCLoss` (shrink 0.1); a 5-feature MLP whose 8 outputs are 2 risks x 4
    durations under `DeepHitLoss` (competing risks, alpha 0.3, its rank matrix from
    `pair_rank_mat`); a 4-output MLP under `NLLPCHazardLoss` (with interval fractions) and
    `BCESurvLoss`; and the survival `1 - cumsum(pad_col(pmf))` from pycox's `pad_col` and
    `cumsum_reverse`; summed, backward, Adam step, in a user function, batch 8."""
    import torch
    from pycox.models import loss as pl
    from pycox.models.cox_time import MLPVanillaCoxTime
    from pycox.models.data import pair_rank_mat
    from pycox.models.utils import cumsum_reverse, pad_col

    torch.manual_seed(0)
    cfg = dict(features=5, batch=8, hidden=16, coxcc=dict(shrink=0.1), deephit=dict(risks=2, durations=4, alpha=0.3,
               sigma=0.1), pc_hazard=dict(durations=4), lr=1e-2)
    ct = MLPVanillaCoxTime(5, [16], batch_norm=True)
    dh_net = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8))
    pc_net = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    ct.train(), dh_net.train(), pc_net.train()
    params = [*ct.parameters(), *dh_net.parameters(), *pc_net.parameters()]
    opt = torch.optim.Adam(params, lr=1e-2)
    coxcc, dh = pl.CoxCCLoss(shrink=0.1), pl.DeepHitLoss(alpha=0.3, sigma=0.1)
    pch, bce = pl.NLLPCHazardLoss(), pl.BCESurvLoss()

    def train(x, x_ctrl, t, idx_durations, events, risk_events, rank_mat, interval_frac):
        g_case = ct(x, t)
        g_ctrl = ct(x_ctrl, t)
        phi_cr = dh_net(x).view(8, 2, 4)
        phi = pc_net(x)
        loss = (coxcc(g_case, (g_ctrl,)) + dh(phi_cr, idx_durations, risk_events, rank_mat)
                + pch(phi, idx_durations, events, interval_frac) + bce(phi, idx_durations, events))
        opt.zero_grad()
        loss.backward()
        opt.step()
        pmf = pad_col(phi.detach()).softmax(1)[:, :-1]
        return loss.detach(), 1 - pmf.cumsum(1), cumsum_reverse(pmf, dim=1), [p.detach().clone() for p in params]
    g = torch.Generator().manual_seed(1)
    idx = torch.randint(0, 4, (8,), generator=g)
    risk = torch.tensor([1, 0, 2, 1, 0, 2, 1, 2])
    rank = torch.from_numpy(pair_rank_mat(idx.numpy(), risk.numpy())).float()
    return cfg, train, {"x": torch.randn(8, 5, generator=g), "x_ctrl": torch.randn(8, 5, generator=g),
                        "t": torch.rand(8, 1, generator=g), "idx_durations": idx, "events": (risk > 0).float(),
                        "risk_events": risk, "rank_mat": rank, "interval_frac": torch.rand(8, generator=g)}


def _torchhd_vsa_ops():
    """torch-hd's vector-symbolic operations as its README composes a record: `torchhd.random` key and
    value hypervectors (MAP, 1000-d) bound and bundled into a record (`bind`, `multiset`,
    `hash_table`), unbinding a value and its `cosine_similarity` / `dot_similarity` to the item
    memory, `permute` and a `bundle_sequence`; the same record in the FHRR and BSC models
    (`hamming_similarity`), and `hard_quantize`; in a user function returning plain tensors
    (`as_subclass(torch.Tensor)`: the harness reloads outputs with `weights_only`)."""
    import torch
    import torchhd

    cfg = dict(dim=1000, keys=3, vsa=("MAP", "FHRR", "BSC"))
    g = torch.Generator().manual_seed(1)
    mem = {v: (torchhd.random(3, 1000, vsa=v, generator=g), torchhd.random(3, 1000, vsa=v, generator=g))
           for v in ("MAP", "FHRR", "BSC")}

    def record(noise):
        keys, values = mem["MAP"]
        rec = torchhd.hash_table(keys, values)
        rec2 = torchhd.multiset(torchhd.bind(keys, values))
        q = torchhd.bind(rec, torchhd.inverse(keys[0])) + noise
        out = [torchhd.cosine_similarity(q, values), torchhd.dot_similarity(q, values),
               torchhd.bundle_sequence(values), torchhd.permute(rec, shifts=2), torchhd.hard_quantize(rec2)]
        fk, fv = mem["FHRR"]
        frec = torchhd.hash_table(fk, fv)
        out.append(torchhd.cosine_similarity(torchhd.bind(frec, torchhd.inverse(fk[1])), fv))
        bk, bv = mem["BSC"]
        brec = torchhd.multiset(torchhd.bind(bk, bv))
        out.append(torchhd.hamming_similarity(torchhd.bind(brec, bk[2]), bv))
        return [o.as_subclass(torch.Tensor) for o in out]
    return cfg, record, {"noise": 0.1 * torch.randn(1000, generator=g)}


def _torchhd_centroid_train():
    """torch-hd's classification as its README trains it: a `Sinusoid` embedding (4 features to
    1000-d) and a `Level` embedding (10 levels) of the same batch bound together, hard
    quantized, a `Centroid` classifier (3 classes) trained with `add` and `add_online` (lr 0.5),
    then normalized and asked for `dot` predictions; in a user function, a batch of 6, returning
    plain tensors."""
    import torch
    import torchhd
    from torchhd import embeddings
    from torchhd.models import Centroid

    torch.manual_seed(0)
    cfg = dict(features=4, dim=1000, levels=10, classes=3, batch=6, lr=0.5)
    enc = embeddings.Sinusoid(4, 1000)
    lvl = embeddings.Level(10, 1000, low=-2.0, high=2.0)
    model = Centroid(1000, 3)

    def train(x, y):
        with torch.no_grad():
            h = torchhd.hard_quantize(torchhd.bind(enc(x), torchhd.multiset(lvl(x))))
            model.add(h, y)
            model.add_online(h, y, lr=0.5)
            scores = model(h, dot=True)
            model.normalize()
            return [o.as_subclass(torch.Tensor) for o in (scores, model(h), model.weight.clone())]
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(6, 4, generator=g), "y": torch.tensor([0, 1, 2, 0, 1, 2])}


_ARM_URDF = """<robot name="arm">
<link name="base"/><link name="l1"/><link name="l2"/><link name="l3"/><link name="ee"/>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.1" rpy="0 0 0"/>
<axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
<joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.3" rpy="0 0.2 0"/>
<axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
<joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0.25 0 0" rpy="0 0 0"/>
<axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
<joint name="j4" type="prismatic"><parent link="l3"/><child link="ee"/><origin xyz="0.2 0 0" rpy="0 0 0"/>
<axis xyz="1 0 0"/><limit lower="0" upper="0.2" effort="1" velocity="1"/></joint>
</robot>"""


def _pk_fk_jacobian():
    """pytorch-kinematics as its README runs a serial chain: a 4-joint arm (3 revolute, 1
    prismatic) built from a URDF string (`build_serial_chain_from_urdf`), batched
    `forward_kinematics` of 4 configurations (all links), the end-effector matrix, its quaternion
    (`matrix_to_quaternion`), `transform_points` and `inverse`, the geometric `jacobian` at an
    offset point, and `clamp` to the joint limits; in a user function."""
    import torch
    import pytorch_kinematics as pk

    cfg = dict(joints=4, batch=4, urdf="revolute z, y, y; prismatic x", jacobian_offset=(0.0, 0.0, 0.05))
    chain = pk.build_serial_chain_from_urdf(_ARM_URDF, "ee")

    def fk(th):
        ret = chain.forward_kinematics(th, end_only=False)
        tg = ret["ee"]
        m = tg.get_matrix()
        J = chain.jacobian(th, locations=torch.tensor([0.0, 0.0, 0.05]))
        return (m, pk.matrix_to_quaternion(m[:, :3, :3]), tg.transform_points(torch.zeros(1, 3)),
                tg.inverse().get_matrix(), ret["l2"].get_matrix(), J, chain.clamp(3 * th))
    g = torch.Generator().manual_seed(1)
    return cfg, fk, {"th": torch.randn(4, 4, generator=g)}


def _pk_ik_solve():
    """pytorch-kinematics' inverse kinematics as its README solves it: `PseudoInverseIK` on the
    4-joint arm (3 retries from seeded random configurations, 6 iterations, lr 0.2, joint limits,
    early stop when any converges) toward 2 goal poses from `forward_kinematics`; then
    `Transform3d` composition with `rotation_conversions` (`euler_angles_to_matrix`,
    `quaternion_to_matrix`); in a user function."""
    import torch
    import pytorch_kinematics as pk

    cfg = dict(joints=4, goals=2, ik=dict(num_retries=3, max_iterations=6, lr=0.2, early_stopping_any_converged=True))
    chain = pk.build_serial_chain_from_urdf(_ARM_URDF, "ee")
    lim = torch.tensor(chain.get_joint_limits())
    torch.manual_seed(0)
    ik = pk.PseudoInverseIK(chain, max_iterations=6, num_retries=3, joint_limits=lim.T,
                            early_stopping_any_converged=True, lr=0.2,
                            retry_configs=lim[0] + (lim[1] - lim[0]) * torch.rand(3, 4))

    def solve(goal_th, aa, q):
        goal = chain.forward_kinematics(goal_th)
        sol = ik.solve(goal)
        t = pk.Transform3d(rot=pk.euler_angles_to_matrix(aa, "XYZ"))
        t = t.compose(pk.Transform3d(rot=pk.quaternion_to_matrix(q)))
        return sol.solutions, sol.converged, sol.err_pos, sol.err_rot, t.get_matrix()
    g = torch.Generator().manual_seed(1)
    q = torch.randn(2, 4, generator=g)
    return cfg, solve, {"goal_th": 0.5 * torch.randn(2, 4, generator=g), "aa": torch.randn(2, 3, generator=g),
                        "q": q / q.norm(dim=1, keepdim=True)}


# round 30: torchimize 0.0.16, torchlie 0.1.0, posteriors 0.1.3, cherry-rl 0.2.0 and higher 0.2.1,
# code nobody tuned on, measured before anything was changed for it


def _damped_cosine(p, t, y):
    """The residual of a damped cosine a exp(-b t) cos(c t) against samples y (torchimize's entries)."""
    import torch

    return p[0] * torch.exp(-p[1] * t) * torch.cos(p[2] * t) - y


def _torchimize_single_fit():
    """torchimize's single-problem solvers as its README fits a curve: a damped cosine
    (3 parameters) to 20 noisy samples by `lsq_lma` (Levenberg, then Marquardt damping), `lsq_gna`
    (Gauss-Newton) with the numerical Jacobian (`torch.autograd.functional.jacobian`), `lsq_lma`
    with a user-supplied Jacobian, and `gradient_descent` (a step along the least-squares
    solution of the Jacobian); 6 iterations each, in float64, in a user function. (In float32,
    `gradient_descent`'s `lstsq` of the 20x3 Jacobian differed in its last bit between eager runs
    in separate processes, 1 of 3; in float64 6 of 6 agreed.)"""
    import torch
    from torchimize.functions import gradient_descent, lsq_gna, lsq_lma

    cfg = dict(params=3, samples=20, max_iter=6, methods=("lev", "marq", "gna", "lev+jac", "gd"), gd_lr=1e-2,
               dtype="float64")

    def jac(p, t, y):
        e, s, c = torch.exp(-p[1] * t), torch.sin(p[2] * t), torch.cos(p[2] * t)
        return torch.stack([e * c, -p[0] * t * e * c, -p[0] * t * e * s], dim=-1)

    def fit(p0, t, y):
        lev = lsq_lma(p0, _damped_cosine, args=(t, y), max_iter=6)
        marq = lsq_lma(p0, _damped_cosine, args=(t, y), meth="marq", max_iter=6)
        gna = lsq_gna(p0, _damped_cosine, args=(t, y), max_iter=6)
        lev_j = lsq_lma(p0, _damped_cosine, jac_function=jac, args=(t, y), max_iter=6)
        gd = gradient_descent(p0, _damped_cosine, args=(t, y), l=1e-2, max_iter=6)
        return lev[-1], marq[-1], gna[-1], lev_j[-1], gd[-1], torch.tensor(float(len(lev)))
    g = torch.Generator().manual_seed(1)
    t = torch.linspace(0, 3, 20, dtype=torch.float64)
    y = 1.5 * torch.exp(-0.7 * t) * torch.cos(2.0 * t) + 0.01 * torch.randn(20, generator=g, dtype=torch.float64)
    return cfg, fit, {"p0": torch.tensor([1.0, 0.5, 1.8], dtype=torch.float64), "t": t, "y": y}


def _torchimize_parallel_fit():
    """torchimize's batched solvers as its README fits many curves at once: 4 damped cosines
    (3 parameters each, amplitudes 1, 1.5, 2, 0.5) by `lsq_lma_parallel` (Levenberg and Marquardt
    damping, masked per-problem updates and convergence), `lsq_gna_parallel` and
    `gradient_descent_parallel` with the batched numerical Jacobian; 5 iterations each, in a user
    function."""
    import torch
    from torchimize.functions import gradient_descent_parallel, lsq_gna_parallel, lsq_lma_parallel

    cfg = dict(problems=4, params=3, samples=20, max_iter=5, methods=("lev", "marq", "gna", "gd"))

    def res(p, t, y):  # (batch, costs=1, samples)
        return (p[:, 0:1] * torch.exp(-p[:, 1:2] * t) * torch.cos(p[:, 2:3] * t) - y)[:, None, :]

    def fit(p0, t, y):
        lev = lsq_lma_parallel(p0.clone(), res, args=(t, y), max_iter=5)
        marq = lsq_lma_parallel(p0.clone(), res, args=(t, y), meth="marq", max_iter=5)
        gna = lsq_gna_parallel(p0.clone(), res, args=(t, y), max_iter=5)
        gd = gradient_descent_parallel(p0.clone(), res, args=(t, y), l=1e-2, max_iter=5)
        return lev[-1], marq[-1], gna[-1], gd[-1]
    g = torch.Generator().manual_seed(1)
    t = torch.linspace(0, 3, 20)
    y = (torch.stack([s * torch.exp(-0.7 * t) * torch.cos(2.0 * t) for s in (1.0, 1.5, 2.0, 0.5)])
         + 0.01 * torch.randn(4, 20, generator=g))
    return cfg, fit, {"p0": torch.tensor([[1.0, 0.5, 1.8]]).repeat(4, 1), "t": t, "y": y}


def _torchlie_group_ops():
    """torchlie's functional Lie-group API as Theseus calls it, on plain tensors: SO(3) `exp`,
    `log`, `adj`, `inv`, `compose`, `transform`, `hat`/`vee` and `quaternion_to_rotation` of a
    batch of 4; SE(3) `exp`, `log`, `adj`, `compose` with the inverse, `transform`, `untransform`
    and `left_act`; then an SO(3) and an SE(3) log-exp round trip under `enable_checks()`
    (torchlie's group-membership checks); in a user function."""
    import torch
    from torchlie.functional import SE3, SO3, enable_checks

    cfg = dict(batch=4, groups=("SO3", "SE3"), checks=True)

    def run(w, xi, pts, q):
        R = SO3.exp(w)
        out = [R, SO3.log(R), SO3.adj(R), SO3.inv(R), SO3.compose(R, SO3.inv(R)), SO3.transform(R, pts),
               SO3.hat(w), SO3.vee(SO3.hat(w)), SO3.quaternion_to_rotation(q)]
        T = SE3.exp(xi)
        out += [T, SE3.log(T), SE3.adj(T), SE3.compose(T, SE3.inv(T)), SE3.transform(T, pts),
                SE3.untransform(T, pts), SE3.left_act(T, pts.new_ones(4, 3, 2))]
        with enable_checks():
            out += [SO3.log(SO3.exp(w)), SE3.log(SE3.exp(xi))]
        return out
    g = torch.Generator().manual_seed(1)
    q = torch.randn(4, 4, generator=g)
    return cfg, run, {"w": torch.randn(4, 3, generator=g), "xi": torch.randn(4, 6, generator=g),
                      "pts": torch.randn(4, 3, generator=g), "q": q / q.norm(dim=-1, keepdim=True)}


def _torchlie_pose_train():
    """torchlie in a pose fit, as Theseus' examples learn a rigid transform: learnable SE(3) tangent
    vectors (2 poses) mapped by `SE3.exp`, points transformed by them against targets, plus the
    squared `SE3.log` of the relative pose (`compose` with `inv`) to a detached half-step pose and
    an SO(3) rotation-only term (`SO3.exp`, `log` of `compose`); backward through torchlie's
    autograd Functions, Adam step; in a user function."""
    import torch
    from torchlie.functional import SE3, SO3

    torch.manual_seed(0)
    cfg = dict(poses=2, lr=1e-2)
    xi = torch.nn.Parameter(0.1 * torch.randn(2, 6))
    opt = torch.optim.Adam([xi], lr=1e-2)

    def train(target, pts):
        T = SE3.exp(xi)
        pred = SE3.transform(T, pts)
        rel = SE3.log(SE3.compose(SE3.inv(T), SE3.exp(0.5 * xi.detach())))
        rot = SO3.log(SO3.compose(SO3.exp(xi[:, 3:]), SO3.exp(-0.5 * xi[:, 3:].detach())))
        loss = ((pred - target) ** 2).mean() + rel.pow(2).mean() + rot.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach(), xi.detach().clone()
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"target": torch.randn(2, 3, generator=g), "pts": torch.randn(2, 3, generator=g)}


def _posteriors_model():
    """A 3-8-2 MLP classifier as posteriors' tutorials write one: parameters as a dict, a log
    posterior (cross entropy plus a Gaussian prior) and a log likelihood through
    `torch.func.functional_call`."""
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    params = {k: v.detach().clone() for k, v in net.named_parameters()}

    def log_likelihood(p, batch):
        x, y = batch
        logits = torch.func.functional_call(net, p, (x,))
        return -torch.nn.functional.cross_entropy(logits, y, reduction="sum"), logits

    def log_posterior(p, batch):
        import posteriors

        ll, logits = log_likelihood(p, batch)
        return ll + posteriors.diag_normal_log_prob(p, sd_diag=1.0, normalize=False), logits
    return net, params, log_posterior, log_likelihood


def _posteriors_sgmcmc_train():
    """posteriors' SG-MCMC samplers as its README steps them, on an MLP classifier's posterior
    (batch of 6, the prior by `diag_normal_log_prob` with a scalar sd): one step each of SGHMC,
    SGLD, BAOA and SGNHT from `build(...).init/update`; then `cg` solving a damped
    Hessian-vector system (`hvp`) for the last layer's bias and `L_from_flat` of 6 values; in a
    user function."""
    import torch
    import posteriors

    net, params, log_posterior, _ = _posteriors_model()
    cfg = dict(mlp=(3, 8, 2), batch=6, lr=1e-3, samplers=("sghmc", "sgld", "baoa", "sgnht"), cg=dict(maxiter=5))
    sghmc = posteriors.sgmcmc.sghmc.build(log_posterior, lr=1e-3, alpha=0.1)
    sgld = posteriors.sgmcmc.sgld.build(log_posterior, lr=1e-3)
    baoa = posteriors.sgmcmc.baoa.build(log_posterior, lr=1e-3)
    sgnht = posteriors.sgmcmc.sgnht.build(log_posterior, lr=1e-3)

    def step(x, y, v, L_flat):
        torch.manual_seed(3)
        h, _ = sghmc.update(sghmc.init(params), (x, y))
        lg, _ = sgld.update(sgld.init(params), (x, y))
        b, _ = baoa.update(baoa.init(params), (x, y))
        n, _ = sgnht.update(sgnht.init(params), (x, y))
        bias = params["2.bias"]

        def f(bb):
            return log_posterior({**params, "2.bias": bb}, (x, y))[0]
        sol, info = posteriors.cg(lambda u: -posteriors.hvp(f, (bias,), (u,))[1], v, maxiter=5, damping=1.0)
        return [h.params["0.weight"], h.momenta["2.bias"], lg.params["0.weight"], lg.log_posterior, b.params["0.bias"],
                n.params["0.bias"], n.xi, sol, info["error"], posteriors.L_from_flat(L_flat)]
    g = torch.Generator().manual_seed(1)
    return cfg, step, {"x": torch.randn(6, 3, generator=g), "y": torch.tensor([0, 1, 0, 1, 1, 0]),
                       "v": torch.randn(2, generator=g), "L_flat": torch.randn(6, generator=g)}


def _posteriors_laplace_ekf():
    """posteriors' Laplace approximations and extended Kalman filters on an MLP classifier (batch
    of 6): diagonal and dense empirical-Fisher Laplace, dense GGN Laplace (the dense ones with a
    unit prior precision; `init`, `update`; 3 `sample`s of the diagonal one), the diagonal and
    dense Fisher EKF (one `update`), and `diag_normal_sample` with a scalar sd; in a user
    function."""
    import torch
    import posteriors
    from posteriors import ekf, laplace

    net, params, log_posterior, log_likelihood = _posteriors_model()
    cfg = dict(mlp=(3, 8, 2), batch=6, samples=3, laplace=("diag_fisher", "dense_fisher", "dense_ggn"),
               ekf=("diag_fisher", "dense_fisher"), ekf_lr=1e-2)

    def forward(p, batch):
        x, _ = batch
        return torch.func.functional_call(net, p, (x,)), torch.tensor([])

    def outer_log_lik(logits, batch):
        return -torch.nn.functional.cross_entropy(logits, batch[1], reduction="sum")

    dfish = laplace.diag_fisher.build(log_posterior)
    dense = laplace.dense_fisher.build(log_posterior, init_prec=1.0)
    ggn = laplace.dense_ggn.build(forward, outer_log_lik, init_prec=1.0)
    ekf_d = ekf.diag_fisher.build(log_likelihood, lr=1e-2)
    ekf_f = ekf.dense_fisher.build(log_likelihood, lr=1e-2)

    def fit(x, y):
        torch.manual_seed(3)
        s, _ = dfish.update(dfish.init(params), (x, y))
        sd, _ = dense.update(dense.init(params), (x, y))
        sg, _ = ggn.update(ggn.init(params), (x, y))
        e, _ = ekf_d.update(ekf_d.init(params), (x, y))
        ef, _ = ekf_f.update(ekf_f.init(params), (x, y))
        out = [s.prec_diag["0.weight"], laplace.diag_fisher.sample(s, (3,))["2.bias"], sd.prec, sg.prec,
               e.params["0.weight"], e.sd_diag["2.bias"], ef.params["2.bias"], ef.cov]
        return out + [posteriors.diag_normal_sample(params, 0.1, (2,))["2.bias"]]
    g = torch.Generator().manual_seed(1)
    return cfg, fit, {"x": torch.randn(6, 3, generator=g), "y": torch.tensor([0, 1, 0, 1, 1, 0])}


def _cherry_policy(torch, ch):
    class GaussianPolicy(ch.nn.Policy):
        def __init__(self):
            super().__init__()
            self.body = ch.nn.MLP(4, 2, [4, 16])  # cherry's MLP: hidden_sizes[0] is the input width
            self.logstd = torch.nn.Parameter(torch.zeros(2))

        def forward(self, s):
            return ch.distributions.Normal(self.body(s), self.logstd.exp())
    return GaussianPolicy()


def _cherry_pg_train():
    """cherry's policy-gradient utilities in an on-policy update, as its PPO and TRPO examples write
    one: a Gaussian policy and a value MLP on a rollout of 8 steps (an episode ends at step 3),
    `td.discount` bootstrapped from the next state's value, `pg.generalized_advantage`,
    `normalize`, `td.temporal_difference`; PPO's clipped policy and value losses, A2C's losses
    and the entropy, summed, backward, Adam step; TRPO's policy loss, its
    `hessian_vector_product` of the KL and `conjugate_gradient` (5 iterations) for the natural
    gradient step; in a user function."""
    import torch
    import cherry as ch
    from cherry.algorithms import A2C, PPO, TRPO

    torch.manual_seed(0)
    cfg = dict(steps=8, state=4, action=2, hidden=16, gamma=0.99, tau=0.95, clip=0.2, cg_iterations=5, lr=1e-3)
    policy = _cherry_policy(torch, ch)
    vf = ch.nn.MLP(4, 1, [4, 16])
    opt = torch.optim.Adam([*policy.parameters(), *vf.parameters()], lr=1e-3)

    def train(states, actions, rewards, dones, old_log_probs, next_state):
        values = vf(states)
        next_value = vf(next_state)
        ret = ch.td.discount(0.99, rewards, dones, bootstrap=next_value.detach()[0])
        adv = ch.pg.generalized_advantage(0.99, 0.95, rewards, dones, values.detach(), next_value.detach())
        adv = ch.normalize(adv)
        tde = ch.td.temporal_difference(0.99, rewards, dones, values.detach(), vf(states.roll(-1, 0)).detach())
        density = policy(states)
        logp = density.log_prob(actions).sum(-1, keepdim=True)
        loss = (PPO.policy_loss(logp, old_log_probs, adv, clip=0.2)
                + PPO.state_value_loss(values, values.detach() + 0.1, ret, clip=0.2)
                + A2C.policy_loss(logp, adv) + A2C.state_value_loss(values, ret) + 0.01 * density.entropy().mean())
        tr = TRPO.policy_loss(logp, old_log_probs, adv)
        grads = torch.autograd.grad(tr, list(policy.parameters()), retain_graph=True)
        ref = ch.distributions.Normal(density.mean.detach(), density.stddev.detach())
        kl = torch.distributions.kl_divergence(density, ref).mean()
        hvp = TRPO.hessian_vector_product(kl, list(policy.parameters()))
        step = TRPO.conjugate_gradient(hvp, grads, num_iterations=5)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return (loss.detach(), tde, adv, [s.detach() for s in step],
                [p.detach().clone() for p in [*policy.parameters(), *vf.parameters()]])
    g = torch.Generator().manual_seed(1)
    dones = torch.zeros(8, 1)
    dones[3] = 1.0
    return cfg, train, {"states": torch.randn(8, 4, generator=g), "actions": torch.randn(8, 2, generator=g),
                        "rewards": torch.randn(8, 1, generator=g), "dones": dones,
                        "old_log_probs": -torch.rand(8, 1, generator=g) - 1.0,
                        "next_state": torch.randn(1, 4, generator=g)}


def _cherry_sac_update():
    """cherry's SAC update as its examples call it: an `ExperienceReplay` of 12 transitions (state
    4, action 2, an episode ending every 5 steps) built beforehand, a `TanhNormal` policy, twin Q
    networks (`nn.Twin`) and their target copy, automatic entropy tuning of a learnable
    log-alpha; `SAC(batch_size=6).update(...)` (replay `sample`, entropy, Q, policy and target
    updates with their optimizers, the DotMap of `.item()` statistics); `random.seed` and
    `torch.manual_seed` first, so every call samples the same batch; in a user function."""
    import random

    import torch
    import cherry as ch
    from cherry.algorithms import SAC

    torch.manual_seed(0)
    cfg = dict(replay=12, batch=6, state=4, action=2, hidden=16, lr=1e-3, target_entropy=-2.0)

    class TanhPolicy(ch.nn.Policy):
        def __init__(self):
            super().__init__()
            self.body = ch.nn.MLP(4, 4, [4, 16])

        def forward(self, s):
            m, logstd = self.body(s).chunk(2, -1)
            return ch.distributions.TanhNormal(m, logstd.clamp(-5, 2).exp())

    class Q(ch.nn.ActionValue):
        def __init__(self):
            super().__init__()
            self.net = ch.nn.MLP(6, 1, [6, 16])

        def forward(self, s, a):
            return self.net(torch.cat([s, a], -1))

    policy, qf, qt = TanhPolicy(), ch.nn.Twin(Q(), Q()), ch.nn.Twin(Q(), Q())
    qt.load_state_dict(qf.state_dict())
    log_alpha = torch.zeros(1, requires_grad=True)
    pol_opt, q_opt = torch.optim.Adam(policy.parameters(), lr=1e-3), torch.optim.Adam(qf.parameters(), lr=1e-3)
    alpha_opt = torch.optim.Adam([log_alpha], lr=1e-3)
    feat_opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.0)  # no feature extractor
    g = torch.Generator().manual_seed(1)
    replay = ch.ExperienceReplay()
    for t in range(12):
        replay.append(torch.randn(4, generator=g), torch.rand(2, generator=g) * 2 - 1, torch.randn(1, generator=g),
                      torch.randn(4, generator=g), float(t % 5 == 4))
    sac = SAC(batch_size=6)

    def update(target_entropy):
        random.seed(0)
        torch.manual_seed(3)
        stats = sac.update(replay, policy, qf, qt, log_alpha, target_entropy, pol_opt, feat_opt, q_opt, alpha_opt,
                           update_target=True)
        return ([p.detach().clone() for p in [*policy.parameters(), *qf.parameters(), *qt.parameters()]],
                log_alpha.detach().clone(), torch.tensor([stats[k] for k in sorted(stats)]))
    return cfg, update, {"target_entropy": torch.tensor(-2.0)}


def _higher_maml_train():
    """higher's differentiable inner loop as its README meta-trains: a 2-16-1 regressor, SGD with
    momentum as the inner optimizer, `innerloop_ctx` (copy_initial_weights=False), 3 inner steps
    on a support batch of 5 through `diffopt.step`, the query loss backpropagated through the
    unrolled steps to the initial weights, Adam meta step; in a user function."""
    import torch
    import higher

    torch.manual_seed(0)
    cfg = dict(mlp=(2, 16, 1), inner=dict(opt="SGD", lr=0.1, momentum=0.9, steps=3), meta_lr=1e-3, shots=5)
    net = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    meta_opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    inner = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)

    def step(xs, ys, xq, yq):
        meta_opt.zero_grad()
        with higher.innerloop_ctx(net, inner, copy_initial_weights=False) as (fnet, diffopt):
            for _ in range(3):
                diffopt.step(torch.nn.functional.mse_loss(fnet(xs), ys))
            qloss = torch.nn.functional.mse_loss(fnet(xq), yq)
            qloss.backward()
        meta_opt.step()
        return qloss.detach(), [p.detach().clone() for p in net.parameters()]
    g = torch.Generator().manual_seed(1)
    return cfg, step, {"xs": torch.randn(5, 2, generator=g), "ys": torch.randn(5, 1, generator=g),
                       "xq": torch.randn(5, 2, generator=g), "yq": torch.randn(5, 1, generator=g)}


def _higher_hypergrad():
    """higher's differentiable optimizers for a hypergradient, as its docs tune a learning rate:
    a 2-8-1 regressor, `get_trainable_opt_params` of an Adam turned into a learnable lr
    `override`, 2 unrolled steps each with `DifferentiableAdam` (amsgrad, the learnable lr),
    `DifferentiableAdadelta`, `DifferentiableAdamax`, `DifferentiableASGD` and `DifferentiableRprop`
    (`innerloop_ctx`), the validation loss, and its gradient with respect to Adam's lr
    (`torch.autograd.grad`); in a user function. (Adagrad and RMSprop were left out: their masked
    accumulators' `register_hook` makes Dynamo recurse until RecursionError.)"""
    import torch
    import higher
    from higher.optim import get_trainable_opt_params

    torch.manual_seed(0)
    cfg = dict(mlp=(2, 8, 1), steps=2, optims=("Adam amsgrad", "Adadelta", "Adamax", "ASGD", "Rprop"))
    net = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    opts = [torch.optim.Adam(net.parameters(), lr=1e-2, amsgrad=True), torch.optim.Adadelta(net.parameters(), lr=0.5),
            torch.optim.Adamax(net.parameters(), lr=1e-2), torch.optim.ASGD(net.parameters(), lr=1e-2),
            torch.optim.Rprop(net.parameters(), lr=1e-2)]
    override = get_trainable_opt_params(opts[0])

    def hyper(x, y, xv, yv):
        out = []
        for i, opt in enumerate(opts):
            ov = override if i == 0 else None
            with higher.innerloop_ctx(net, opt, override=ov) as (fnet, diffopt):
                for _ in range(2):
                    diffopt.step(torch.nn.functional.mse_loss(fnet(x), y))
                vloss = torch.nn.functional.mse_loss(fnet(xv), yv)
                if ov is not None:
                    out += [g.detach() for g in torch.autograd.grad(vloss, ov["lr"])]
                out += [vloss.detach(), next(fnet.parameters()).detach()]
        return out
    g = torch.Generator().manual_seed(1)
    return cfg, hyper, {"x": torch.randn(6, 2, generator=g), "y": torch.randn(6, 1, generator=g),
                        "xv": torch.randn(6, 2, generator=g), "yv": torch.randn(6, 1, generator=g)}


# round 31: pyhessian 0.1, geotorch 0.4.0, torchsparsegradutils 0.2.7, torcheval 0.0.7 and pythae 0.1.2,
# code nobody tuned on, measured before anything was changed for it


def _pyhessian_eigen_trace():
    """PyHessian as its README analyses a trained network's loss surface: a 4-8-3 MLP under cross
    entropy on one batch of 6 (`hessian(model, criterion, data=...)`, which backpropagates with
    `create_graph=True`), the top 2 Hessian eigenvalues by power iteration (`eigenvalues`, 5
    iterations, deflating by `orthnormal`) and the trace by Hutchinson's method (`trace`, 4
    Rademacher probes); in a user function that clears the gradients first (pyhessian reads
    `p.grad`, which a second call would accumulate)."""
    import torch
    from pyhessian import hessian

    torch.manual_seed(0)
    cfg = dict(mlp=(4, 8, 3), batch=6, top_n=2, power_iters=5, trace_iters=4)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    crit = torch.nn.CrossEntropyLoss()

    def analyse(x, y):
        model.zero_grad(set_to_none=True)
        h = hessian(model, crit, data=(x, y), cuda=False)
        ev, vecs = h.eigenvalues(maxIter=5, tol=1e-3, top_n=2)
        tr = h.trace(maxIter=4, tol=1e-3)
        return torch.tensor(ev), torch.tensor(tr), vecs[0][0].detach(), vecs[1][-1].detach()
    g = torch.Generator().manual_seed(1)
    return cfg, analyse, {"x": torch.randn(6, 4, generator=g), "y": torch.randint(0, 3, (6,), generator=g)}


def _pyhessian_dataloader():
    """PyHessian over a data loader (`hessian(model, criterion, dataloader=...)`): a 3-6-2 MLP
    under cross entropy on two batches of 4, the top eigenvalue (3 power iterations) and the
    trace (3 probes), each Hessian-vector product accumulated batch by batch
    (`dataloader_hv_product`: backward with `create_graph=True`, `torch.autograd.grad`), and the
    `group_product` / `normalization` helpers on the eigenvector; in a user function."""
    import torch
    from pyhessian import hessian
    from pyhessian.utils import group_product, normalization

    torch.manual_seed(0)
    cfg = dict(mlp=(3, 6, 2), batches=2, batch=4, power_iters=3, trace_iters=3)
    model = torch.nn.Sequential(torch.nn.Linear(3, 6), torch.nn.ReLU(), torch.nn.Linear(6, 2))
    crit = torch.nn.CrossEntropyLoss()

    def analyse(x, y):
        model.zero_grad(set_to_none=True)
        h = hessian(model, crit, dataloader=[(x[:4], y[:4]), (x[4:], y[4:])], cuda=False)
        ev, vecs = h.eigenvalues(maxIter=3, tol=1e-3, top_n=1)
        tr = h.trace(maxIter=3, tol=1e-3)
        v = normalization(vecs[0])
        return torch.tensor(ev), torch.tensor(tr), group_product(v, vecs[0]).detach(), v[0].detach()
    g = torch.Generator().manual_seed(1)
    return cfg, analyse, {"x": torch.randn(8, 3, generator=g), "y": torch.randint(0, 2, (8,), generator=g)}


def _geotorch_layers():
    import torch
    import geotorch

    torch.manual_seed(0)
    layers = {"orthogonal": torch.nn.Linear(5, 5), "low_rank": torch.nn.Linear(5, 4),
              "positive_definite": torch.nn.Linear(4, 4), "sphere": torch.nn.Linear(4, 3),
              "almost_orthogonal": torch.nn.Linear(3, 3), "invertible": torch.nn.Linear(3, 3),
              "sln": torch.nn.Linear(3, 3), "grassmannian": torch.nn.Linear(3, 2), "skew": torch.nn.Linear(2, 2)}
    geotorch.orthogonal(layers["orthogonal"], "weight")
    geotorch.low_rank(layers["low_rank"], "weight", 2)
    geotorch.positive_definite(layers["positive_definite"], "weight")
    geotorch.sphere(layers["sphere"], "weight")
    geotorch.almost_orthogonal(layers["almost_orthogonal"], "weight", 0.5)
    geotorch.invertible(layers["invertible"], "weight")
    geotorch.sln(layers["sln"], "weight")
    geotorch.grassmannian(layers["grassmannian"], "weight")
    geotorch.skew(layers["skew"], "weight")
    return layers


def _geotorch_constrained_train():
    """geotorch's constrained layers as its README trains them: a chain of 9 linear layers whose
    weights are orthogonal (`expm`), low rank (2), positive definite, on the sphere, almost
    orthogonal (lam 0.5), invertible, of determinant 1 (`sln`), on the Grassmannian and skew,
    each a parametrization geotorch registers (`torch.nn.utils.parametrize`); an MSE loss, an SGD
    step, then each weight checked on its manifold (`in_manifold`, as geotorch's tests check them);
    in a user function."""
    import torch

    layers = _geotorch_layers()
    cfg = dict(widths=(5, 5, 4, 4, 3, 3, 3, 3, 2, 2), constraints=tuple(layers), lr=1e-2)
    net = torch.nn.Sequential(*layers.values())
    opt = torch.optim.SGD(net.parameters(), lr=1e-2)

    def train(x, y):
        loss = torch.nn.functional.mse_loss(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        ok = [torch.as_tensor(m.parametrizations.weight[0].in_manifold(m.weight)) for m in layers.values()]
        return [loss.detach(), net[0].weight.detach(), net[3].weight.detach(), *ok]
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(6, 5, generator=g), "y": torch.randn(6, 2, generator=g)}


def _geotorch_assign_sample():
    """geotorch's initialisation API: a rotation (QR, determinant made positive), a skew matrix and
    unit rows assigned to the orthogonal, skew and sphere weights (`right_inverse`, checking the
    manifold), `sample()` of the SO, low-rank, positive-definite, GL+, SL, Grassmannian and skew
    manifolds, then `uniform_init_` and `torus_init_` of an empty 4x4; in a user function."""
    import torch
    import geotorch

    layers = _geotorch_layers()
    cfg = dict(assigned=("orthogonal", "skew", "sphere"),
               sampled=("orthogonal", "low_rank", "positive_definite", "invertible", "sln", "grassmannian", "skew"),
               inits=("uniform_init_", "torus_init_"))

    def init(a, s, r):
        q, rr = torch.linalg.qr(a)
        q = q * torch.sign(torch.diagonal(rr)).unsqueeze(0)
        q = torch.cat([q[:, :1] * torch.sign(torch.det(q)), q[:, 1:]], dim=1)
        with torch.no_grad():
            layers["orthogonal"].weight = q
            layers["skew"].weight = s - s.T
            layers["sphere"].weight = r / r.norm(dim=-1, keepdim=True)
            out = [layers["orthogonal"].weight, layers["skew"].weight, layers["sphere"].weight]
            for k in cfg["sampled"]:
                out.append(layers[k].parametrizations.weight[0].sample())
            out.append(geotorch.so.uniform_init_(torch.empty(4, 4)))
            out.append(geotorch.so.torus_init_(torch.empty(4, 4)))
        return out
    g = torch.Generator().manual_seed(1)
    return cfg, init, {"a": torch.randn(5, 5, generator=g), "s": torch.randn(2, 2, generator=g),
                       "r": torch.randn(3, 4, generator=g)}


def _tsgu_iterative_solvers():
    """torchsparsegradutils' iterative solvers on dense 8x8 systems (a matrix or its `matmul`):
    `linear_cg` (GPyTorch's CG with 10 iterations and a 5-step Lanczos tridiagonalisation) and
    `minres` of an SPD matrix with 2 right-hand sides, `bicgstab` of a nonsymmetric one, `lsmr`
    (10 iterations) of a single right-hand side; in a user function."""
    import torch
    from torchsparsegradutils.utils import bicgstab, linear_cg, lsmr, minres

    cfg = dict(n=8, rhs=2, solvers=("linear_cg", "minres", "bicgstab", "lsmr"), max_iter=10)

    def solve(A, N, b):
        x1 = linear_cg(A, b, max_iter=10, max_tridiag_iter=5)
        x2 = minres(A, b, max_iter=10)
        x3 = bicgstab(N, b)
        x4, it = lsmr(N, b[:, 0], maxiter=10)
        return x1, x2, x3, x4, torch.tensor(it)
    g = torch.Generator().manual_seed(1)
    M = torch.randn(8, 8, generator=g)
    A = M @ M.T + 8 * torch.eye(8)
    return cfg, solve, {"A": A, "N": A + 0.3 * torch.randn(8, 8, generator=g), "b": torch.randn(8, 2, generator=g)}


def _tsgu_sparse_solve_train():
    """torchsparsegradutils' sparse-aware gradients in a training step: a tridiagonal 8x8 COO
    matrix whose off-diagonal values are learnable, solved against learnable right-hand sides by
    `sparse_generic_solve` with `linear_cg` (forward and transposed) and with the default `minres`,
    multiplied by `sparse_mm`; MSE to targets, backward through the implicit-function gradients
    (sparse in A), an Adam step; in a user function."""
    import torch
    from torchsparsegradutils import sparse_generic_solve, sparse_mm
    from torchsparsegradutils.utils import linear_cg

    torch.manual_seed(0)
    n = 8
    cfg = dict(n=n, structure="tridiagonal COO", solvers=("linear_cg", "minres"), lr=1e-2)
    w = torch.nn.Parameter(torch.zeros(2 * n - 1))
    B = torch.nn.Parameter(torch.randn(n, 2))
    opt = torch.optim.Adam([w, B], lr=1e-2)

    def train(idx, base, target):
        vals = base + torch.cat([w, w[n:]])
        A = torch.sparse_coo_tensor(idx, vals, (n, n)).coalesce()
        x = sparse_generic_solve(A, B, solve=linear_cg, transpose_solve=linear_cg)
        x2 = sparse_generic_solve(A, B)
        y = sparse_mm(A, B)
        loss = ((x - target) ** 2).mean() + ((x2 - target) ** 2).mean() + y.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach(), w.detach().clone(), B.detach().clone()
    g = torch.Generator().manual_seed(1)
    ar = torch.arange(n)
    idx = torch.cat([torch.stack([ar, ar]), torch.stack([ar[:-1], ar[1:]]), torch.stack([ar[1:], ar[:-1]])], 1)
    base = torch.cat([4 + torch.rand(n, generator=g), -torch.ones(n - 1), -torch.ones(n - 1)])
    return cfg, train, {"idx": idx, "base": base, "target": torch.randn(n, 2, generator=g)}


def _torcheval_functional():
    """torcheval's functional metrics on 10 binary scores and 10 3-class logits: binary AUROC,
    AUPRC, binned AUROC (5 thresholds) and normalized entropy; multiclass accuracy, macro F1,
    per-class precision, weighted recall and the confusion matrix; R2 and MSE; retrieval precision
    at 3, reciprocal rank, hit rate at 2 and perplexity; in a user function."""
    import torch
    from torcheval.metrics import functional as F

    cfg = dict(samples=10, classes=3, metrics=15)

    def metrics(p, t, lg, y):
        return [F.binary_auroc(p, t), F.binary_auprc(p, t), F.binary_binned_auroc(p, t, threshold=5)[0],
                F.binary_normalized_entropy(p, t.float()), F.multiclass_accuracy(lg, y),
                F.multiclass_f1_score(lg, y, num_classes=3, average="macro"),
                F.multiclass_precision(lg, y, num_classes=3, average=None),
                F.multiclass_recall(lg, y, num_classes=3, average="weighted"),
                F.multiclass_confusion_matrix(lg, y, num_classes=3), F.r2_score(lg, lg + 0.1 * p[:, None]),
                F.mean_squared_error(p, t.float()), F.retrieval_precision(p, t, k=3), F.reciprocal_rank(lg, y),
                F.hit_rate(lg, y, k=2), F.perplexity(lg[None], y[None])]
    g = torch.Generator().manual_seed(1)
    return cfg, metrics, {"p": torch.rand(10, generator=g), "t": torch.randint(0, 2, (10,), generator=g),
                          "lg": torch.randn(10, 3, generator=g), "y": torch.randint(0, 3, (10,), generator=g)}


def _torcheval_metric_classes():
    """torcheval's stateful metrics as an evaluation loop uses them: `reset`, two `update`s of 5
    samples each and `compute` of MulticlassAccuracy (macro, 3 classes), MulticlassF1Score (macro),
    BinaryAUROC, BinaryPrecisionRecallCurve, MeanSquaredError, R2Score, Mean and Sum; in a user
    function (reset first, so that every call starts from empty state)."""
    import torch
    from torcheval.metrics import (BinaryAUROC, BinaryPrecisionRecallCurve, Mean, MeanSquaredError,
                                   MulticlassAccuracy, MulticlassF1Score, R2Score, Sum)

    cfg = dict(samples=10, updates=2, classes=3)
    acc, f1 = MulticlassAccuracy(average="macro", num_classes=3), MulticlassF1Score(num_classes=3, average="macro")
    auroc, prc, mse, r2, mean, total = (BinaryAUROC(), BinaryPrecisionRecallCurve(), MeanSquaredError(), R2Score(),
                                        Mean(), Sum())
    ms = (acc, f1, auroc, prc, mse, r2, mean, total)

    def evaluate(p, t, lg, y):
        for m in ms:
            m.reset()
        for s in (slice(0, 5), slice(5, 10)):
            acc.update(lg[s], y[s])
            f1.update(lg[s], y[s])
            auroc.update(p[s], t[s])
            prc.update(p[s], t[s])
            mse.update(p[s], t[s].float())
            r2.update(p[s], t[s].float())
            mean.update(p[s])
            total.update(p[s])
        pr = prc.compute()
        return [acc.compute(), f1.compute(), auroc.compute(), *pr, mse.compute(), r2.compute(), mean.compute(),
                total.compute()]
    g = torch.Generator().manual_seed(1)
    return cfg, evaluate, {"p": torch.rand(10, generator=g), "t": torch.randint(0, 2, (10,), generator=g),
                           "lg": torch.randn(10, 3, generator=g), "y": torch.randint(0, 3, (10,), generator=g)}


def _pythae_models(*names):
    import torch
    from pythae.models import (HVAE, RHVAE, SVAE, VAMP, HVAEConfig, RHVAEConfig, SVAEConfig, VAMPConfig)

    torch.manual_seed(0)
    make = {"rhvae": lambda: RHVAE(RHVAEConfig(input_dim=(1, 8, 8), latent_dim=2, n_lf=2)),
            "hvae": lambda: HVAE(HVAEConfig(input_dim=(1, 8, 8), latent_dim=2, n_lf=2)),
            "vamp": lambda: VAMP(VAMPConfig(input_dim=(1, 8, 8), latent_dim=2, number_components=3)),
            "svae": lambda: SVAE(SVAEConfig(input_dim=(1, 8, 8), latent_dim=2))}
    return [make[n]().train() for n in names]


def _pythae_hamiltonian_train():
    """pythae's Hamiltonian VAEs as its training pipeline steps them: an RHVAE (Riemannian
    Hamiltonian VAE, 2 leapfrog steps with the learned metric, `torch.autograd.grad` of the
    Hamiltonian) and an HVAE (2 leapfrog steps), pythae's default MLP encoder and decoder on 4
    random 8x8 images (`DatasetOutput(data=...)`, `epoch=1`), their losses summed, an Adam step;
    in a user function. (pythae's VAE, IWAE, PoincareVAE, VQVAE, BetaTCVAE, WAE_MMD, INFOVAE_MMD,
    VAE_IAF and VAE_LinNF forwards do not compile: Dynamo's `ModelOutput`, an OrderedDict subclass
    setting attributes in `__setitem__`, raises AttributeError on the output's fields.)"""
    import torch
    from pythae.data.datasets import DatasetOutput

    rhvae, hvae = _pythae_models("rhvae", "hvae")
    cfg = dict(input_dim=(1, 8, 8), latent_dim=2, n_lf=2, models=("RHVAE", "HVAE"), lr=1e-3)
    opt = torch.optim.Adam([*rhvae.parameters(), *hvae.parameters()], lr=1e-3)

    def train(x):
        batch = DatasetOutput(data=x)
        loss = rhvae(batch, epoch=1).loss + hvae(batch, epoch=1).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach(), rhvae.M_tens.detach().clone(), next(hvae.parameters()).detach().clone()
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.rand(4, 1, 8, 8, generator=g)}


def _pythae_vamp_svae_loss():
    """pythae's VAMP (a VampPrior of 3 learned pseudo-inputs) and SVAE (a hyperspherical VAE:
    von Mises-Fisher posterior, rejection sampling of w, the uniform prior on the sphere) losses
    on 4 random 8x8 images, with the reconstructions and latent codes; in a user function."""
    import torch
    from pythae.data.datasets import DatasetOutput

    vamp, svae = _pythae_models("vamp", "svae")
    cfg = dict(input_dim=(1, 8, 8), latent_dim=2, number_components=3, models=("VAMP", "SVAE"))

    def losses(x):
        batch = DatasetOutput(data=x)
        a = vamp(batch, epoch=1)
        b = svae(batch, epoch=1)
        return a.loss, a.recon_x, a.z, b.loss, b.recon_x, b.z
    g = torch.Generator().manual_seed(1)
    return cfg, losses, {"x": torch.rand(4, 1, 8, 8, generator=g)}


# round 32: torchstain 1.4.1, lampe 0.9.0, torch-lr-finder 0.2.2 and poutyne 1.19.0,
# code nobody tuned on, measured before anything was changed for it


def _torchstain_images(n, seed=1):
    import torch

    g = torch.Generator().manual_seed(seed)
    # H&E-like tiles: pinkish-purple stain over a light background, uint8 [3, 16, 16]
    base = torch.tensor([200.0, 120.0, 190.0]).view(3, 1, 1)
    return [(base + 40 * torch.randn(3, 16, 16, generator=g)).clamp(20, 250).to(torch.uint8) for _ in range(n)]


def _torchstain_macenko():
    """torchstain's Macenko stain normalisation as its README runs it on H&E tiles: a
    `TorchMacenkoNormalizer` fit to a 16x16 target tile (optical density, transparent pixels
    removed by a boolean mask, `eigh` of the covariance, percentile angles by `kthvalue`,
    `lstsq` concentrations), `normalize` of a source tile with the H and E stain images, then a
    `TorchMacenkoAugmentor` fit to the source and `augment`ed (its concentrations scaled and
    shifted by `torch.rand` draws of sigma 0.2, seeded first); in a user function."""
    import torch
    from torchstain.torch.augmentors import TorchMacenkoAugmentor
    from torchstain.torch.normalizers import TorchMacenkoNormalizer

    cfg = dict(tile=(3, 16, 16), Io=240, alpha=1, beta=0.15, sigma=(0.2, 0.2))
    norm, aug = TorchMacenkoNormalizer(), TorchMacenkoAugmentor(sigma1=0.2, sigma2=0.2)

    def run(target, source):
        norm.fit(target)
        inorm, h, e = norm.normalize(source, stains=True)
        aug.fit(source)
        torch.manual_seed(0)
        out = aug.augment()
        return inorm, h, e, norm.HERef, norm.maxCRef, out
    target, source = _torchstain_images(2)
    return cfg, run, {"target": target, "source": source}


def _torchstain_reinhard_multi():
    """torchstain's Reinhard normalisation (LAB colour statistics: `rgb2lab`/`lab2rgb` through
    masked `masked_scatter_`, per-channel mean and std) fit to a target tile and applied to a
    source with the plain and the "modified" method, and the multi-target Macenko normaliser
    (`TorchMultiMacenkoNormalizer`, "avg-post": the stain matrices of 2 targets averaged) fit
    and applied; in a user function."""
    from torchstain.torch.normalizers import TorchMultiMacenkoNormalizer, TorchReinhardNormalizer

    cfg = dict(tile=(3, 16, 16), reinhard=(None, "modified"), multi="avg-post", targets=2)
    rh, rm, mm = TorchReinhardNormalizer(), TorchReinhardNormalizer(method="modified"), \
        TorchMultiMacenkoNormalizer(norm_mode="avg-post")

    def run(t1, t2, source):
        rh.fit(t1)
        rm.fit(t1)
        mm.fit([t1, t2])
        inorm, h, e = mm.normalize(source, stains=True)
        return rh.normalize(source), rm.normalize(source), inorm, h, e, mm.HERef, mm.maxCRef
    t1, t2, source = _torchstain_images(3)
    return cfg, run, {"t1": t1, "t2": t2, "source": source}


def _lampe_npe_nre_train():
    """lampe's neural posterior and ratio estimation as its tutorials train them: an NPE (zuko's
    MAF, 2 transforms, of a 2-parameter posterior given 3 observables) under `NPELoss`, an NRE
    (MLP classifier) under `NRELoss` and a second under `BNRELoss` (balanced), one Adam step
    each through lampe's `GDStep` (its finite-loss test, gradients clipped at norm 1.0 and the
    clipped norm tested); then log-probs and log-ratios of the first pair; in a user function."""
    import torch
    from lampe.inference import BNRELoss, NPE, NPELoss, NRE, NRELoss
    from lampe.utils import GDStep

    torch.manual_seed(0)
    cfg = dict(theta_dim=2, x_dim=3, batch=8, flow="MAF", transforms=2, hidden=(16, 16), lr=1e-3, clip=1.0)
    npe = NPE(2, 3, transforms=2, hidden_features=[16, 16])
    nre, bnre = NRE(2, 3, hidden_features=[16, 16]), NRE(2, 3, hidden_features=[16, 16])
    losses = [NPELoss(npe), NRELoss(nre), BNRELoss(bnre)]
    steps = [GDStep(torch.optim.Adam(m.parameters(), lr=1e-3), clip=1.0) for m in (npe, nre, bnre)]

    def train(theta, x):
        ls = [step(loss(theta, x)) for step, loss in zip(steps, losses)]
        return [*ls, npe(theta[:1], x[:1]).detach(), nre(theta[:1], x[:1]).detach(),
                bnre(theta[:1], x[:1]).detach()]
    g = torch.Generator().manual_seed(1)
    theta = torch.rand(8, 2, generator=g) * 2 - 1
    x = torch.cat([theta, theta.sum(-1, keepdim=True)], -1) + 0.1 * torch.randn(8, 3, generator=g)
    return cfg, train, {"theta": theta, "x": x}


def _lampe_mcmc_amnre():
    """lampe's AMNRE (arbitrary marginal ratio estimator: masked parameters scattered into
    zeros by `masked_scatter`) under `AMNRELoss` with a `BernoulliMask` of p 0.5, the log-ratio
    of a marginal given by `str2mask("10")`; a `MetropolisHastings` chain of 4 walkers on an NRE's
    log-ratio plus a box prior (`islice` of its generator, burn 2, 6 draws) and `gridapply` of
    the log-ratio over a 4x4 grid; in a user function (the draws seeded first)."""
    import torch
    from lampe.inference import AMNRE, AMNRELoss, NRE, MetropolisHastings
    from lampe.masks import BernoulliMask, str2mask
    from lampe.utils import gridapply

    torch.manual_seed(0)
    cfg = dict(theta_dim=2, x_dim=3, batch=8, mask_p=0.5, walkers=4, burn=2, draws=6, grid=4)
    amnre, nre = AMNRE(2, 3, hidden_features=[16, 16]), NRE(2, 3, hidden_features=[16, 16])
    aloss = AMNRELoss(amnre, BernoulliMask(0.5 * torch.ones(2)))
    lower, upper = -torch.ones(2), torch.ones(2)

    def infer(theta, x, x0):
        torch.manual_seed(0)
        la = aloss(theta, x)
        marg = amnre(theta[:, :1], x, str2mask("10"))
        log_p = lambda th: nre(th, x0) + torch.where(((th >= lower) & (th <= upper)).all(-1), 0.0, -1e9)
        chain = MetropolisHastings(torch.zeros(4, 2), log_f=log_p, sigma=0.3)
        draws = torch.stack(list(chain(8, burn=2)))
        grid, vals = gridapply(lambda th: nre(th, x0), (lower, upper), bins=4)
        return la.detach(), marg.detach(), draws.detach(), grid, vals.detach()
    g = torch.Generator().manual_seed(1)
    theta = torch.rand(8, 2, generator=g) * 2 - 1
    x = torch.cat([theta, theta.sum(-1, keepdim=True)], -1) + 0.1 * torch.randn(8, 3, generator=g)
    return cfg, infer, {"theta": theta, "x": x, "x0": x[0]}


def _lr_finder_setup():
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    return model, torch.nn.CrossEntropyLoss()


def _lr_finder_range_test():
    """torch-lr-finder's learning-rate range test as its README runs it: `LRFinder(model, SGD,
    cross entropy)` over a `DataLoader` of 16 samples in batches of 4, `range_test` from 1e-4 to
    1 in 6 exponential steps (its `ExponentialLR` schedule, the loss smoothed with 0.05, the
    divergence test against the best loss, `loss.item()` per batch, tqdm's bar), then `reset()`
    (model and optimizer state restored from the in-memory cache its constructor filled); in a
    user function. (The `LRFinder` is built outside it: built in the compiled function, `reset`
    raises "Missing key(s) in state_dict", the cache's `copy.deepcopy(model.state_dict())` made
    under Dynamo coming back empty.)"""
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    from torch_lr_finder import LRFinder

    model, crit = _lr_finder_setup()
    opt = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
    cfg = dict(mlp=(4, 8, 3), samples=16, batch=4, start_lr=1e-4, end_lr=1.0, num_iter=6, step_mode="exp")
    finder = LRFinder(model, opt, crit, device="cpu")

    def search(x, y):
        finder.range_test(DataLoader(TensorDataset(x, y), batch_size=4), end_lr=1.0, num_iter=6)
        lrs, ls = torch.tensor(finder.history["lr"]), torch.tensor(finder.history["loss"])
        finder.reset()
        return lrs, ls, torch.tensor(finder.best_loss), model[0].weight.detach().clone()
    g = torch.Generator().manual_seed(1)
    return cfg, search, {"x": torch.randn(16, 4, generator=g), "y": torch.randint(0, 3, (16,), generator=g)}


def _lr_finder_val_accum():
    """torch-lr-finder's range test with a validation loader and gradient accumulation: `Adam`,
    `range_test` with `val_loader` (the loss is the validation loss, `_validate` summing
    `loss.item() * len(labels)`), `accumulation_steps=2`, 4 linear steps (`LinearLR`) to 1e-1,
    no smoothing (`smooth_f=0`), a divergence threshold of 3, then `reset()`; in a user
    function (the `LRFinder` built outside it, as in lr-finder-range-test)."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    from torch_lr_finder import LRFinder

    model, crit = _lr_finder_setup()
    opt = torch.optim.Adam(model.parameters(), lr=1e-5)
    cfg = dict(mlp=(4, 8, 3), train=16, val=8, batch=4, accumulation_steps=2, end_lr=1e-1, num_iter=4,
               step_mode="linear", smooth_f=0, diverge_th=3)
    finder = LRFinder(model, opt, crit, device="cpu")

    def search(x, y, xv, yv):
        finder.range_test(DataLoader(TensorDataset(x, y), batch_size=4),
                          val_loader=DataLoader(TensorDataset(xv, yv), batch_size=4), end_lr=1e-1, num_iter=4,
                          step_mode="linear", smooth_f=0, diverge_th=3, accumulation_steps=2)
        lrs, ls = torch.tensor(finder.history["lr"]), torch.tensor(finder.history["loss"])
        finder.reset()
        return lrs, ls, model[2].weight.detach().clone()
    g = torch.Generator().manual_seed(1)
    return cfg, search, {"x": torch.randn(16, 4, generator=g), "y": torch.randint(0, 3, (16,), generator=g),
                         "xv": torch.randn(8, 4, generator=g), "yv": torch.randint(0, 3, (8,), generator=g)}


def _poutyne_model(**kw):
    import torch
    from poutyne import Model

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    return Model(net, "sgd", "cross_entropy", **kw)


def _poutyne_batches():
    """poutyne's Keras-like `Model` on a 5-8-3 MLP (its optimizer and loss given by name, "sgd"
    and "cross_entropy"; batch metrics "accuracy" and "f1", epoch metric "f1"):
    `train_on_batch` with predictions returned, `evaluate_on_batch` and `predict_on_batch`,
    all with `convert_to_numpy=False`; in a user function."""
    import torch

    model = _poutyne_model(batch_metrics=["accuracy", "f1"], epoch_metrics=["f1"])
    cfg = dict(mlp=(5, 8, 3), batch=8, optimizer="sgd", loss="cross_entropy", batch_metrics=("accuracy", "f1"))

    def step(x, y):
        loss, metrics, pred = model.train_on_batch(x, y, return_pred=True, convert_to_numpy=False)
        eloss, emetrics = model.evaluate_on_batch(x, y, convert_to_numpy=False)
        p = model.predict_on_batch(x, convert_to_numpy=False)
        return torch.as_tensor(loss), torch.as_tensor(metrics), pred, torch.as_tensor(eloss), \
            torch.as_tensor(emetrics), p
    g = torch.Generator().manual_seed(1)
    return cfg, step, {"x": torch.randn(8, 5, generator=g), "y": torch.randint(0, 3, (8,), generator=g)}


def _poutyne_fit_evaluate():
    """poutyne's training loop: `Model.fit` on tensors (2 epochs over 16 samples in batches of 4,
    a validation split of 8, `verbose=False`, no shuffling; batch metric "accuracy", epoch
    metric "f1"; its `EarlyStopping` and `ReduceLROnPlateau` callbacks), then `evaluate` on
    the validation tensors with predictions; in a user function."""
    import torch
    from poutyne import EarlyStopping, ReduceLROnPlateau

    model = _poutyne_model(batch_metrics=["accuracy"], epoch_metrics=["f1"])
    cfg = dict(mlp=(5, 8, 3), train=16, valid=8, batch=4, epochs=2, callbacks=("EarlyStopping", "ReduceLROnPlateau"))

    def fit(x, y, xv, yv):
        hist = model.fit(x, y, validation_data=(xv, yv), epochs=2, batch_size=4, verbose=False,
                         callbacks=[EarlyStopping(patience=1), ReduceLROnPlateau(patience=1)],
                         dataloader_kwargs={"shuffle": False})
        loss, metrics, pred = model.evaluate(xv, yv, return_pred=True, verbose=False, convert_to_numpy=False)
        return (torch.tensor([[h["loss"], h["val_loss"], h["acc"], h["val_fscore_macro"]] for h in hist]),
                torch.as_tensor(loss), torch.as_tensor(metrics), pred)
    g = torch.Generator().manual_seed(1)
    return cfg, fit, {"x": torch.randn(16, 5, generator=g), "y": torch.randint(0, 3, (16,), generator=g),
                      "xv": torch.randn(8, 5, generator=g), "yv": torch.randint(0, 3, (8,), generator=g)}


# round 33: deepctr-torch 0.3.0, pytorch-warmup 0.2.0, pytorch-accelerated 0.1.61 and
# rtdl-revisiting-models 0.0.2, code nobody tuned on, measured before anything was changed for it


def _deepctr_data(n, seed=1):
    import numpy as np

    rng = np.random.default_rng(seed)
    # two categorical fields (vocabularies 5 and 4), one dense feature, a binary click label
    data = {"c1": rng.integers(0, 5, n), "c2": rng.integers(0, 4, n), "d1": rng.random(n).astype("float32")}
    y = (rng.random(n) < 0.5).astype("float32")
    return data, y


def _deepctr_columns():
    from deepctr_torch.inputs import DenseFeat, SparseFeat

    return [SparseFeat("c1", 5, embedding_dim=4), SparseFeat("c2", 4, embedding_dim=4), DenseFeat("d1", 1)]


def _deepctr_deepfm_fit():
    """deepctr-torch's DeepFM as its README trains it on a CTR table: 2 sparse fields
    (`SparseFeat`, embedding 4) and 1 dense (`DenseFeat`), `compile("adam", "binary_crossentropy")`
    (no metrics: with any, scikit-learn's metrics crash Dynamo, see docs/benchmarks.md's Round 33),
    `fit` on the numpy feature dict (16 rows, batch 4, 1 epoch, `validation_split=0.25`, no
    shuffling, `verbose=2`: `np.concatenate` of the columns, `loss.item()` per batch, the epoch
    log printed), then `predict` (batches to numpy, concatenated); in a user function (the model
    seeded and built outside it)."""
    import torch
    from deepctr_torch.models import DeepFM

    torch.manual_seed(0)
    cols = _deepctr_columns()
    model = DeepFM(cols, cols, dnn_hidden_units=(8, 8), task="binary", device="cpu")
    model.compile("adam", "binary_crossentropy")
    cfg = dict(sparse=(5, 4), dense=1, embedding=4, dnn=(8, 8), rows=16, batch=4, epochs=1, validation_split=0.25)
    data, y = _deepctr_data(16)

    def fit():
        hist = model.fit(dict(data), y, batch_size=4, epochs=1, verbose=2, validation_split=0.25, shuffle=False)
        pred = model.predict(dict(data), batch_size=8)
        return torch.tensor(hist.history["loss"]), torch.as_tensor(pred)
    return cfg, fit, {}


def _deepctr_dcn_earlystop():
    """deepctr-torch's DCN (a vector cross network of 2 layers beside an 8-8 DNN, L2 on the
    embeddings and the cross kernels through `get_regularization_loss`) compiled with
    "binary_crossentropy" (no metrics, as in deepctr-deepfm-fit), `fit` for 3 epochs in batches
    of 4 with `validation_data` (its `evaluate`: `predict` on the validation table) and
    deepctr's `EarlyStopping(monitor="loss", patience=1)` callback (verbose 0), then `predict`;
    in a user function (built outside it)."""
    import torch
    from deepctr_torch.callbacks import EarlyStopping
    from deepctr_torch.models import DCN

    torch.manual_seed(0)
    cols = _deepctr_columns()
    model = DCN(cols, cols, cross_num=2, dnn_hidden_units=(8, 8), l2_reg_embedding=1e-4, l2_reg_cross=1e-4,
                task="binary", device="cpu")
    model.compile("adam", "binary_crossentropy")
    cfg = dict(sparse=(5, 4), dense=1, cross_num=2, dnn=(8, 8), train=16, valid=8, batch=4, epochs=3,
               callbacks=("EarlyStopping",))
    data, y = _deepctr_data(16)
    vdata, vy = _deepctr_data(8, seed=2)

    def fit():
        hist = model.fit(dict(data), y, batch_size=4, epochs=3, verbose=0, validation_data=(dict(vdata), vy),
                         shuffle=False, callbacks=[EarlyStopping(monitor="loss", patience=1)])
        return torch.tensor(hist.history["loss"]), torch.as_tensor(model.predict(dict(vdata), batch_size=4))
    return cfg, fit, {}


def _warmup_model():
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))


def _warmup_linear_cosine():
    """pytorch-warmup's schedule as its README uses it: `AdamW` (lr 1e-2), a
    `CosineAnnealingLR` over 6 steps and a `LinearWarmup` of period 3; 6 training steps (MSE,
    backward, `optimizer.step()`, then `with warmup.dampening(): lr_scheduler.step()`, the
    warmup factor multiplied into each group's lr), the lr recorded per step, then the warmup's
    `state_dict()`; in a user function (optimizer, schedule and warmup built outside it)."""
    import torch
    import pytorch_warmup as warmup

    model = _warmup_model()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6)
    wu = warmup.LinearWarmup(opt, warmup_period=3)
    cfg = dict(mlp=(4, 8, 1), optimizer="AdamW", lr=1e-2, schedule="CosineAnnealingLR", T_max=6, warmup="linear",
               warmup_period=3, steps=6)

    def train(x, y):
        lrs, losses = [], []
        for i in range(6):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x[i::6]), y[i::6])
            loss.backward()
            opt.step()
            with wu.dampening():
                sched.step()
            lrs.append(opt.param_groups[0]["lr"])
            losses.append(loss.detach())
        return torch.tensor(lrs), torch.stack(losses), torch.tensor(wu.state_dict()["last_step"])
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(24, 4, generator=g), "y": torch.randn(24, 1, generator=g)}


def _warmup_untuned_radam():
    """pytorch-warmup's parameter-free schedules: `UntunedExponentialWarmup` on an `Adam` (its
    period from beta2, `2 / (1 - beta2)`), under an `ExponentialLR` of gamma 0.9, and
    `RAdamWarmup` on a second Adam (`rho_inf` and the per-step warmup factor from the
    RAdam variance rectification, `math.sqrt` of it); 5 training steps each
    (`with warmup.dampening(): scheduler.step()`, the lrs recorded); in a user function."""
    import torch
    import pytorch_warmup as warmup

    m1, m2 = _warmup_model(), _warmup_model()
    o1 = torch.optim.Adam(m1.parameters(), lr=1e-2, betas=(0.9, 0.99))
    o2 = torch.optim.Adam(m2.parameters(), lr=1e-2, betas=(0.9, 0.999))
    s1 = torch.optim.lr_scheduler.ExponentialLR(o1, gamma=0.9)
    s2 = torch.optim.lr_scheduler.ExponentialLR(o2, gamma=0.9)
    w1, w2 = warmup.UntunedExponentialWarmup(o1), warmup.RAdamWarmup(o2)
    cfg = dict(mlp=(4, 8, 1), optimizer="Adam", lr=1e-2, schedule="ExponentialLR", gamma=0.9,
               warmups=("UntunedExponentialWarmup", "RAdamWarmup"), steps=5)

    def train(x, y):
        lrs = []
        for i in range(5):
            for m, o, s, w in ((m1, o1, s1, w1), (m2, o2, s2, w2)):
                o.zero_grad()
                torch.nn.functional.mse_loss(m(x[i::5]), y[i::5]).backward()
                o.step()
                with w.dampening():
                    s.step()
                lrs.append(o.param_groups[0]["lr"])
        return torch.tensor(lrs), m1[0].weight.detach().clone(), m2[0].weight.detach().clone()
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x": torch.randn(20, 4, generator=g), "y": torch.randn(20, 1, generator=g)}


def _accel_trainer(**kw):
    import torch
    from pytorch_accelerated import Trainer

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return model, Trainer(model=model, loss_func=torch.nn.CrossEntropyLoss(), optimizer=opt, **kw)


def _accel_dataset(n, seed):
    import torch
    from torch.utils.data import TensorDataset

    g = torch.Generator().manual_seed(seed)
    return TensorDataset(torch.randn(n, 4, generator=g), torch.randint(0, 3, (n,), generator=g))


def _accel_train_eval():
    """pytorch-accelerated's `Trainer` as its README runs it: a 4-8-3 MLP with SGD and cross
    entropy, its default callbacks (modules moved to the device, the NaN check, progress
    printing, tqdm bars, the metrics logged), `train` for 2 epochs over 16 samples with an
    eval set of 8 (batch 4; Accelerate's `prepare`d model, optimizer and loaders,
    `accelerator.backward`, the loss tracker's `gather`ed batch losses), the run history's
    train and eval epoch losses, then `evaluate` (its history reset, the "evaluation_loss"); in a
    user function (the `Trainer` built outside it)."""
    import torch

    model, trainer = _accel_trainer()
    cfg = dict(mlp=(4, 8, 3), optimizer="SGD", train=16, eval=8, batch=4, epochs=2, callbacks="default")
    train_ds, eval_ds = _accel_dataset(16, 1), _accel_dataset(8, 2)

    def run():
        trainer.train(train_dataset=train_ds, eval_dataset=eval_ds, num_epochs=2, per_device_batch_size=4,
                      train_dataloader_kwargs={"shuffle": False})
        h = trainer.run_history
        losses = torch.tensor([h.get_metric_values(k) for k in ("train_loss_epoch", "eval_loss_epoch")])
        trainer.evaluate(dataset=eval_ds, per_device_batch_size=4)
        return losses, torch.tensor(trainer.run_history.get_latest_metric("evaluation_loss")), \
            model[0].weight.detach().clone()
    return cfg, run, {}


def _accel_cosine_accum():
    """pytorch-accelerated's `Trainer` with its `CosineLrScheduler` (`create_scheduler_fn` with
    1 warmup epoch, the placeholders for epochs and update steps filled in by the trainer),
    gradient accumulation over 2 steps, gradient clipping at 1.0 and 3 epochs over 16 samples
    (batch 4) with an eval set of 8, and its callbacks given: `MoveModulesToDeviceCallback`,
    `TerminateOnNaNCallback`, `PrintProgressCallback`, `LogMetricsCallback` and
    `EarlyStoppingCallback(early_stopping_patience=2)` on the eval loss (no tqdm bars); in a user
    function (the `Trainer` built outside it)."""
    import torch
    from pytorch_accelerated.callbacks import (EarlyStoppingCallback, LogMetricsCallback, MoveModulesToDeviceCallback,
                                               PrintProgressCallback, TerminateOnNaNCallback)
    from pytorch_accelerated.schedulers import CosineLrScheduler

    model, trainer = _accel_trainer(callbacks=(MoveModulesToDeviceCallback, TerminateOnNaNCallback,
                                               PrintProgressCallback, LogMetricsCallback,
                                               EarlyStoppingCallback(early_stopping_patience=2)))
    cfg = dict(mlp=(4, 8, 3), optimizer="SGD", train=16, eval=8, batch=4, epochs=3, accumulation=2, clip=1.0,
               scheduler="CosineLrScheduler", warmup_epochs=1)
    train_ds, eval_ds = _accel_dataset(16, 1), _accel_dataset(8, 2)

    def run():
        trainer.train(train_dataset=train_ds, eval_dataset=eval_ds, num_epochs=3, per_device_batch_size=4,
                      gradient_accumulation_steps=2, gradient_clip_value=1.0,
                      create_scheduler_fn=CosineLrScheduler.create_scheduler_fn(num_warmup_epochs=1),
                      train_dataloader_kwargs={"shuffle": False})
        h = trainer.run_history
        return torch.tensor(h.get_metric_values("train_loss_epoch")), \
            torch.tensor(h.get_metric_values("eval_loss_epoch")), model[2].weight.detach().clone()
    return cfg, run, {}


def _rtdl_ft_transformer_train():
    """rtdl-revisiting-models' FT-Transformer as its README trains it: continuous features
    through `LinearEmbeddings`, 2 categorical ones through `CategoricalEmbeddings`, a [CLS]
    token, `get_default_kwargs(n_blocks=1)` (attention, ReGLU FFN, dropouts, the last block's
    output on [CLS] only), `make_default_optimizer` (AdamW with its parameter groups, no weight
    decay on embeddings and norms); 2 training steps on cross entropy, then an eval forward;
    in a user function."""
    import torch
    from rtdl_revisiting_models import FTTransformer

    torch.manual_seed(0)
    model = FTTransformer(n_cont_features=3, cat_cardinalities=[4, 5], d_out=2,
                          **FTTransformer.get_default_kwargs(n_blocks=1))
    opt = model.make_default_optimizer()
    cfg = dict(n_cont=3, cat=(4, 5), d_out=2, n_blocks=1, batch=8, steps=2, optimizer="default AdamW")

    def train(x_cont, x_cat, y):
        model.train()
        losses = []
        for _ in range(2):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x_cont, x_cat), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        model.eval()
        with torch.no_grad():
            out = model(x_cont, x_cat)
        return torch.stack(losses), out
    g = torch.Generator().manual_seed(1)
    return cfg, train, {"x_cont": torch.randn(8, 3, generator=g),
                        "x_cat": torch.stack([torch.randint(0, 4, (8,), generator=g),
                                              torch.randint(0, 5, (8,), generator=g)], 1),
                        "y": torch.randint(0, 2, (8,), generator=g)}


def _rtdl_mlp_resnet_linformer():
    """rtdl-revisiting-models' MLP and ResNet baselines (2 blocks each, dropout; one AdamW
    step on MSE each) and an `FTTransformerBackbone` with Linformer key-value compression
    (`linformer_kv_compression_ratio=0.5`, "headwise" sharing) over `LinearEmbeddings` of 4
    features, in eval mode; in a user function."""
    import torch
    from rtdl_revisiting_models import FTTransformerBackbone, LinearEmbeddings, MLP, ResNet

    torch.manual_seed(0)
    mlp = MLP(d_in=4, d_out=1, n_blocks=2, d_block=8, dropout=0.1)
    res = ResNet(d_in=4, d_out=1, n_blocks=2, d_block=8, d_hidden_multiplier=2.0, dropout1=0.1, dropout2=0.0)
    emb = LinearEmbeddings(4, 8)
    bb = FTTransformerBackbone(d_out=1, n_blocks=1, d_block=8, attention_n_heads=2, attention_dropout=0.0,
                               ffn_d_hidden=None, ffn_d_hidden_multiplier=2.0, ffn_dropout=0.0, residual_dropout=0.0,
                               linformer_kv_compression_ratio=0.5, linformer_kv_compression_sharing="headwise",
                               n_tokens=4).eval()
    opts = [torch.optim.AdamW(m.parameters(), lr=1e-3) for m in (mlp, res)]
    cfg = dict(d_in=4, d_block=8, n_blocks=2, batch=8, linformer=(0.5, "headwise"), heads=2)

    def run(x, y):
        losses = []
        for m, o in zip((mlp, res), opts):
            m.train()
            o.zero_grad()
            loss = torch.nn.functional.mse_loss(m(x), y)
            loss.backward()
            o.step()
            losses.append(loss.detach())
        with torch.no_grad():
            out = bb(emb(x))
        return torch.stack(losses), out
    g = torch.Generator().manual_seed(1)
    return cfg, run, {"x": torch.randn(8, 4, generator=g), "y": torch.randn(8, 1, generator=g)}


def _torchkeras_setup():
    import tempfile
    import torch
    import torchmetrics
    from torch.utils.data import DataLoader, TensorDataset
    from torchkeras import KerasModel

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    model = KerasModel(net, loss_fn=torch.nn.CrossEntropyLoss(),
                       metrics_dict={"acc": torchmetrics.Accuracy(task="multiclass", num_classes=3)},
                       optimizer=torch.optim.Adam(net.parameters(), lr=1e-2))
    g = torch.Generator().manual_seed(1)
    dl_train = DataLoader(TensorDataset(torch.randn(16, 4, generator=g), torch.randint(0, 3, (16,), generator=g)),
                          batch_size=4)
    dl_val = DataLoader(TensorDataset(torch.randn(8, 4, generator=g), torch.randint(0, 3, (8,), generator=g)),
                        batch_size=4)
    return model, net, dl_train, dl_val, tempfile.mkdtemp(prefix="torchkeras-")


def _torchkeras_fit():
    """torchkeras' `KerasModel` as its README trains it: a 4-8-3 MLP, cross entropy, Adam and
    torchmetrics' multiclass `Accuracy` in `metrics_dict` (its `compute` and `reset` per epoch); `fit` for 3 epochs
    over DataLoaders of 16 and 8 samples (batch 4) with `plot=False` (its tqdm bars and printed
    logs), `patience=2` on "val_loss" (the best checkpoint saved to a temporary directory and
    reloaded at the end), inside Accelerate's `Accelerator` (`prepare`, `backward`, gradient
    clipping, `gather`, `.item()` of the losses and metrics; the history a pandas DataFrame);
    in a user function (the model built outside it)."""
    import os
    import torch

    model, net, dl_train, dl_val, tmp = _torchkeras_setup()
    cfg = dict(mlp=(4, 8, 3), optimizer="Adam", train=16, val=8, batch=4, epochs=3, patience=2, monitor="val_loss")

    def fit():
        df = model.fit(train_data=dl_train, val_data=dl_val, epochs=3, patience=2, monitor="val_loss", mode="min",
                       ckpt_path=os.path.join(tmp, "checkpoint"), plot=False, cpu=True)
        return torch.tensor(df[["train_loss", "val_loss", "train_acc", "val_acc"]].to_numpy()), \
            net[0].weight.detach().clone()
    return cfg, fit, {}


def _torchkeras_evaluate():
    """torchkeras' `KerasModel.evaluate` on a validation DataLoader (an eval-stage `StepRunner`
    and `EpochRunner`: no optimizer, the loss and accuracy `gather`ed and `.item()`ed per batch,
    averaged over the epoch, its tqdm bar) and the model called as a module (`forward` through
    the net in eval mode); in a user function."""
    import torch
    from accelerate import Accelerator

    model, net, dl_train, dl_val, tmp = _torchkeras_setup()
    model.accelerator = Accelerator(cpu=True)
    cfg = dict(mlp=(4, 8, 3), val=8, batch=4, metrics=("acc",))

    def evaluate(x):
        res = model.evaluate(dl_val, quiet=True)
        net.eval()
        return torch.tensor([res["val_loss"], res["val_acc"]]), model(x)
    g = torch.Generator().manual_seed(2)
    return cfg, evaluate, {"x": torch.randn(4, 4, generator=g)}


# round 34: torchtnt 0.2.4, skrl 2.1.1, torchfm 0.7.0, dasp-pytorch 0.0.1 and torch-ppr 0.0.8, code
# nobody tuned on, measured before anything was changed for it


def _tnt_loaders(seed=1):
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    g = torch.Generator().manual_seed(seed)
    train = TensorDataset(torch.randn(16, 4, generator=g), torch.randint(0, 3, (16,), generator=g))
    val = TensorDataset(torch.randn(8, 4, generator=g), torch.randint(0, 3, (8,), generator=g))
    return DataLoader(train, batch_size=4), DataLoader(val, batch_size=4)


def _tnt_autounit_fit():
    """torchtnt's `AutoUnit` as its docs train with it: a user subclass with `compute_loss`
    (cross entropy on a 4-8-3 MLP) and `configure_optimizers_and_lr_scheduler` (SGD with
    momentum under a `StepLR`, stepped per epoch), 2-step gradient accumulation, clipping at
    1.0; `fit` for 2 epochs over 16 samples (batch 4) with an 8-sample eval loader after each
    epoch (torchtnt's loop: its `State`, phase progress, callbacks handler, `no_sync`/autocast
    contexts, `_is_last_batch_in_epoch` prefetching, timers); in a user function (the unit built
    outside it)."""
    import torch
    from torchtnt.framework import AutoUnit, fit

    class Unit(AutoUnit):
        def compute_loss(self, state, data):
            x, y = data
            out = self.module(x)
            return torch.nn.functional.cross_entropy(out, y), out

        def configure_optimizers_and_lr_scheduler(self, module):
            opt = torch.optim.SGD(module.parameters(), lr=0.05, momentum=0.9)
            return opt, torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    unit = Unit(module=net, device=torch.device("cpu"), gradient_accumulation_steps=2, clip_grad_norm=1.0)
    dl_train, dl_val = _tnt_loaders()
    cfg = dict(mlp=(4, 8, 3), optimizer="SGD", scheduler="StepLR", train=16, val=8, batch=4, epochs=2, accumulation=2,
               clip=1.0)

    def run():
        fit(unit, train_dataloader=dl_train, eval_dataloader=dl_val, max_epochs=2)
        return net[0].weight.detach().clone(), torch.tensor(unit.lr_scheduler.get_last_lr())
    return cfg, run, {}


def _tnt_unit_train_predict():
    """torchtnt's plain units as its docs write them: a user `TrainUnit`/`EvalUnit` (its own
    `train_step` with Adam, `loss.item()` kept per step, `on_train_epoch_end` recording the epoch
    mean, `eval_step` accuracy) run by `train` for 2 epochs with torchtnt's `TQDMProgressBar`
    and `EarlyStopping` on the unit's epoch loss (`EarlyStopChecker`, mode "min", patience 2),
    then `evaluate`, then an `AutoPredictUnit` through `predict`; in a user function."""
    import io
    import torch
    from torchtnt.framework import AutoPredictUnit, EvalUnit, TrainUnit, evaluate, predict, train
    from torchtnt.framework.callbacks import EarlyStopping, TQDMProgressBar
    from torchtnt.utils.early_stop_checker import EarlyStopChecker

    class Unit(TrainUnit, EvalUnit):
        def __init__(self, module):
            super().__init__()
            self.module = module
            self.optimizer = torch.optim.Adam(module.parameters(), lr=1e-2)
            self.losses, self.epoch_loss, self.correct = [], None, 0

        def train_step(self, state, data: tuple):
            x, y = data
            loss = torch.nn.functional.cross_entropy(self.module(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.losses.append(loss.item())

        def on_train_epoch_end(self, state):
            self.epoch_loss = sum(self.losses) / len(self.losses)
            self.losses = []

        def eval_step(self, state, data: tuple):
            x, y = data
            with torch.no_grad():
                self.correct += int((self.module(x).argmax(-1) == y).sum())

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    unit = Unit(net)
    pred_unit = AutoPredictUnit(module=net, device=torch.device("cpu"))
    dl_train, dl_val = _tnt_loaders(2)
    cfg = dict(mlp=(4, 8, 3), optimizer="Adam", train=16, val=8, batch=4, epochs=2,
               callbacks=("TQDMProgressBar", "EarlyStopping"))

    def run():
        train(unit, dl_train, max_epochs=2,
              callbacks=[TQDMProgressBar(file=io.StringIO()),
                         EarlyStopping("epoch_loss", EarlyStopChecker(mode="min", patience=2))])
        evaluate(unit, dl_val)
        predict(pred_unit, [x for x, _ in dl_val])
        return torch.tensor([unit.epoch_loss, unit.correct]), net[2].weight.detach().clone()
    return cfg, run, {}


def _skrl_spaces():
    import gymnasium
    import numpy as np

    return gymnasium.spaces.Box(low=-1.0, high=1.0, shape=(4,), dtype=np.float32)


def _skrl_dqn_update():
    """skrl's DQN as its examples build it: a Q-network and its target (`DeterministicMixin`
    models over a 4-d Box observation and 2 discrete actions), a `RandomMemory` of 32, epsilon
    greedy by the config's `exploration_scheduler` (a linear decay), `learning_starts` 4,
    batch 8; `init`, training mode on, then 8 environment steps driven by the user (synthetic
    transitions; `act` and `record_transition` under `torch.no_grad()` as skrl's trainers call
    them, then `post_interaction`, which updates: target values,
    MSE, Adam, the target network's polyak update, the loss and targets tracked with `.item()`);
    TensorBoard and checkpoints off; in a user function (agent built outside it)."""
    import tempfile
    import gymnasium
    import torch
    from skrl.agents.torch.dqn import DQN, DQN_CFG
    from skrl.memories.torch import RandomMemory
    from skrl.models.torch import DeterministicMixin, Model

    class QNet(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device):
            Model.__init__(self, observation_space=observation_space, action_space=action_space, device=device)
            DeterministicMixin.__init__(self)
            self.net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))

        def compute(self, inputs, role=""):
            return self.net(inputs["observations"]), {}

    torch.manual_seed(0)
    obs, act = _skrl_spaces(), gymnasium.spaces.Discrete(2)
    models = {"q_network": QNet(obs, act, "cpu"), "target_q_network": QNet(obs, act, "cpu")}
    cfg_ = DQN_CFG(batch_size=8, learning_starts=4, random_timesteps=0, target_update_interval=2,
                   exploration_scheduler=lambda t, ts: max(0.1, 1.0 - t / 8),
                   experiment={"directory": tempfile.mkdtemp(prefix="skrl-"), "write_interval": 0,
                               "checkpoint_interval": 0})
    agent = DQN(models=models, memory=RandomMemory(memory_size=32, num_envs=2, device="cpu"),
                observation_space=obs, action_space=act, device="cpu", cfg=cfg_)
    agent.init()
    agent.enable_training_mode(True)
    cfg = dict(q_net=(4, 16, 2), envs=2, memory=32, batch=8, learning_starts=4, steps=8, target_update_interval=2)
    g = torch.Generator().manual_seed(1)
    xs = torch.rand(9, 2, 4, generator=g) * 2 - 1
    rs = torch.randn(8, 2, 1, generator=g)

    def run(xs, rs):
        torch.manual_seed(3)
        for t in range(8):
            agent.pre_interaction(timestep=t, timesteps=8)
            with torch.no_grad():
                actions, _ = agent.act(xs[t], None, timestep=t, timesteps=8)
                agent.record_transition(observations=xs[t], states=None, actions=actions, rewards=rs[t],
                                        next_observations=xs[t + 1], next_states=None, terminated=(rs[t] > 1.5),
                                        truncated=torch.zeros_like(rs[t], dtype=torch.bool), infos={}, timestep=t,
                                        timesteps=8)
            agent.post_interaction(timestep=t, timesteps=8)
        return models["q_network"].net[0].weight.detach().clone(), \
            models["target_q_network"].net[2].weight.detach().clone()
    return cfg, run, {"xs": xs, "rs": rs}


def _skrl_ppo_update():
    """skrl's PPO as its examples build it: a `GaussianMixin` policy (state-independent log
    std) and a `DeterministicMixin` value over a 4-d Box observation and a 2-d Box action, a
    `RandomMemory` of one rollout (8 steps, 2 envs), its `RunningStandardScaler` on observations
    and values and `KLAdaptiveLR` (kl threshold 0.008); 8 steps driven by the user (`pre_interaction`, `act`
    and `record_transition` under `torch.no_grad()` as its trainers do, `post_interaction`), the last of which updates: GAE, 2 learning epochs
    of 2 mini-batches (clipped surrogate, clipped value loss, entropy, gradient clipping, the
    KL-adaptive lr); TensorBoard and checkpoints off; in a user function."""
    import tempfile
    import gymnasium
    import numpy as np
    import torch
    from skrl.agents.torch.ppo import PPO, PPO_CFG
    from skrl.memories.torch import RandomMemory
    from skrl.models.torch import DeterministicMixin, GaussianMixin, Model
    from skrl.resources.preprocessors.torch import RunningStandardScaler
    from skrl.resources.schedulers.torch import KLAdaptiveLR

    class Policy(GaussianMixin, Model):
        def __init__(self, observation_space, action_space, device):
            Model.__init__(self, observation_space=observation_space, action_space=action_space, device=device)
            GaussianMixin.__init__(self, clip_actions=True, clip_log_std=True, min_log_std=-5.0, max_log_std=2.0)
            self.net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
            self.log_std_parameter = torch.nn.Parameter(torch.zeros(2))

        def compute(self, inputs, role=""):
            return self.net(inputs["observations"]), {"log_std": self.log_std_parameter}

    class Value(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device):
            Model.__init__(self, observation_space=observation_space, action_space=action_space, device=device)
            DeterministicMixin.__init__(self)
            self.net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))

        def compute(self, inputs, role=""):
            return self.net(inputs["observations"]), {}

    torch.manual_seed(0)
    obs = _skrl_spaces()
    act = gymnasium.spaces.Box(low=-1.0, high=1.0, shape=(2,), dtype=np.float32)
    models = {"policy": Policy(obs, act, "cpu"), "value": Value(obs, act, "cpu")}
    cfg_ = PPO_CFG(rollouts=8, learning_epochs=2, mini_batches=2, learning_rate=1e-3,
                   learning_rate_scheduler=KLAdaptiveLR, learning_rate_scheduler_kwargs={"kl_threshold": 0.008},
                   observation_preprocessor=RunningStandardScaler,
                   observation_preprocessor_kwargs={"size": obs, "device": "cpu"},
                   value_preprocessor=RunningStandardScaler, value_preprocessor_kwargs={"size": 1, "device": "cpu"},
                   entropy_loss_scale=0.01,
                   experiment={"directory": tempfile.mkdtemp(prefix="skrl-"), "write_interval": 0,
                               "checkpoint_interval": 0})
    agent = PPO(models=models, memory=RandomMemory(memory_size=8, num_envs=2, device="cpu"),
                observation_space=obs, action_space=act, device="cpu", cfg=cfg_)
    agent.init()
    agent.enable_training_mode(True)
    cfg = dict(policy=(4, 16, 2), value=(4, 16, 1), envs=2, rollouts=8, learning_epochs=2, mini_batches=2,
               preprocessors="RunningStandardScaler", scheduler="KLAdaptiveLR")
    g = torch.Generator().manual_seed(1)
    xs = torch.rand(9, 2, 4, generator=g) * 2 - 1
    rs = torch.randn(8, 2, 1, generator=g)

    def run(xs, rs):
        torch.manual_seed(3)
        for t in range(8):
            agent.pre_interaction(timestep=t, timesteps=8)
            with torch.no_grad():
                actions, _ = agent.act(xs[t], None, timestep=t, timesteps=8)
                agent.record_transition(observations=xs[t], states=None, actions=actions, rewards=rs[t],
                                        next_observations=xs[t + 1], next_states=None,
                                        terminated=torch.zeros_like(rs[t], dtype=torch.bool),
                                        truncated=torch.full_like(rs[t], t == 7, dtype=torch.bool), infos={},
                                        timestep=t, timesteps=8)
            agent.post_interaction(timestep=t, timesteps=8)
        return models["policy"].net[0].weight.detach().clone(), models["value"].net[2].weight.detach().clone()
    return cfg, run, {"xs": xs, "rs": rs}


def _torchfm_fields():
    return (5, 4, 3)


def _torchfm_data(n, seed=1):
    import torch

    g = torch.Generator().manual_seed(seed)
    x = torch.stack([torch.randint(0, d, (n,), generator=g) for d in _torchfm_fields()], dim=1)
    return x, (torch.rand(n, generator=g) < 0.5).float()


def _torchfm_deepfm_xdeepfm_train():
    """pytorch-fm's CTR models trained as its examples/main.py trains them: a DeepFM
    (`FeaturesLinear`, `FactorizationMachine`, an MLP over the embeddings) and an xDeepFM
    (`CompressedInteractionNetwork` with split halves) over 3 categorical fields (5, 4, 3), its
    `train` loop copied (a DataLoader of 16 rows in batches of 4, BCE on the sigmoid scores,
    `model.zero_grad()`, `backward`, Adam, `total_loss += loss.item()`), one epoch each; in a
    user function (the models built outside it)."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    from torchfm.model.dfm import DeepFactorizationMachineModel
    from torchfm.model.xdfm import ExtremeDeepFactorizationMachineModel

    torch.manual_seed(0)
    fields = _torchfm_fields()
    models = [DeepFactorizationMachineModel(fields, embed_dim=4, mlp_dims=(8, 8), dropout=0.1),
              ExtremeDeepFactorizationMachineModel(fields, embed_dim=4, cross_layer_sizes=(4, 4), split_half=True,
                                                   mlp_dims=(8, 8), dropout=0.1)]
    opts = [torch.optim.Adam(m.parameters(), lr=1e-2, weight_decay=1e-6) for m in models]
    x, y = _torchfm_data(16)
    loader = DataLoader(TensorDataset(x, y), batch_size=4)
    cfg = dict(fields=fields, embed_dim=4, mlp=(8, 8), cin=(4, 4), rows=16, batch=4, models=("DeepFM", "xDeepFM"))

    def train():
        criterion = torch.nn.BCELoss()
        totals = []
        for model, optimizer in zip(models, opts):
            model.train()
            total_loss = 0
            for i, (fields_, target) in enumerate(loader):
                y_ = model(fields_)
                loss = criterion(y_, target.float())
                model.zero_grad()
                loss.backward()
                optimizer.step()
                total_loss += loss.item()
            totals.append(total_loss / len(loader))
        return torch.tensor(totals), models[1].cin.fc.weight.detach().clone()
    return cfg, train, {}


def _torchfm_interaction_eval():
    """pytorch-fm's interaction models scored as its examples' `test` does (eval mode, no grad,
    the sigmoid scores collected with `.tolist()` per batch): FFM (`FieldAwareFactorizationMachine`,
    the pairwise loops), AFM (attention over the pairs), AFN (logarithmic neurons), DCN
    (`CrossNetwork`), an outer-product PNN and NFM over 3 fields, a DataLoader of 8 rows in
    batches of 4; in a user function."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    from torchfm.model.afm import AttentionalFactorizationMachineModel
    from torchfm.model.afn import AdaptiveFactorizationNetwork
    from torchfm.model.dcn import DeepCrossNetworkModel
    from torchfm.model.ffm import FieldAwareFactorizationMachineModel
    from torchfm.model.nfm import NeuralFactorizationMachineModel
    from torchfm.model.pnn import ProductNeuralNetworkModel

    torch.manual_seed(0)
    f = _torchfm_fields()
    models = [FieldAwareFactorizationMachineModel(f, embed_dim=4),
              AttentionalFactorizationMachineModel(f, embed_dim=4, attn_size=4, dropouts=(0.1, 0.1)),
              AdaptiveFactorizationNetwork(f, embed_dim=4, LNN_dim=3, mlp_dims=(8,), dropouts=(0.1, 0.1)),
              DeepCrossNetworkModel(f, embed_dim=4, num_layers=2, mlp_dims=(8,), dropout=0.1),
              ProductNeuralNetworkModel(f, embed_dim=4, mlp_dims=(8,), method="outer", dropout=0.1),
              NeuralFactorizationMachineModel(f, embed_dim=4, mlp_dims=(8,), dropouts=(0.1, 0.1))]
    x, y = _torchfm_data(8, seed=2)
    loader = DataLoader(TensorDataset(x, y), batch_size=4)
    cfg = dict(fields=f, embed_dim=4, rows=8, batch=4, models=("FFM", "AFM", "AFN", "DCN", "OPNN", "NFM"))

    def test():
        out = []
        for model in models:
            model.eval()
            targets, predicts = list(), list()
            with torch.no_grad():
                for fields_, target in loader:
                    y_ = model(fields_)
                    targets.extend(target.tolist())
                    predicts.extend(y_.tolist())
            out.append(predicts)
        return torch.tensor(out), torch.tensor(targets)
    return cfg, test, {}


def _dasp_eq_compressor_train():
    """dasp-pytorch's differentiable effects as its README's parameter estimation uses them: a
    small encoder predicts normalized parameters (sigmoid) for a 6-band `ParametricEQ` and a
    `Compressor`, each applied through `process_normalized` (the parameter dict extracted and
    denormalized; biquad coefficients, `sosfilt_via_fsm` in the frequency domain; the
    compressor's gain computer and one-pole ballistics), an L1 loss to a target processed with
    fixed parameters, 2 Adam steps; in a user function (encoder and effects built outside it)."""
    import torch
    import dasp_pytorch

    torch.manual_seed(0)
    sr = 8000
    eq, comp = dasp_pytorch.ParametricEQ(sample_rate=sr), dasp_pytorch.Compressor(sample_rate=sr)
    n_eq, n_comp = len(eq.param_ranges), len(comp.param_ranges)
    enc = torch.nn.Sequential(torch.nn.Conv1d(1, 4, 64, stride=32), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool1d(1),
                              torch.nn.Flatten(), torch.nn.Linear(4, n_eq + n_comp))
    opt = torch.optim.Adam(enc.parameters(), lr=1e-3)
    cfg = dict(sample_rate=sr, samples=1024, batch=2, eq_params=n_eq, comp_params=n_comp, steps=2)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 1, 1024, generator=g) * 0.3
    with torch.no_grad():
        y = comp.process_normalized(eq.process_normalized(x, torch.full((2, n_eq), 0.6)), torch.full((2, n_comp), 0.4))

    def train(x, y):
        losses = []
        for _ in range(2):
            p = torch.sigmoid(enc(x))
            out = comp.process_normalized(eq.process_normalized(x, p[:, :n_eq]), p[:, n_eq:])
            loss = torch.nn.functional.l1_loss(out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return torch.stack(losses), out.detach()
    return cfg, train, {"x": x, "y": y}


def _dasp_effects_chain():
    """dasp-pytorch's functional effects chained as a user's mixing function: 3 mono tracks
    through `gain`, panned with `stereo_panner` and summed by `stereo_bus` (send levels in dB),
    the stereo mix through `distortion` (drive per channel), `noise_shaped_reverberation` (12
    bands of octave-filtered noise with per-band gains and decays and a wet/dry mix, a 4096-sample
    impulse response of 63 taps, FFT convolution) and `stereo_widener`; then the `Gain` processor on
    a mono track through `process_normalized` and the `Distortion` processor's parameter dict
    extracted, denormalized and passed to `process` (its `process_normalized` reads a
    `sample_rate` it never sets); eval, no grad; in a
    user function."""
    import torch
    import dasp_pytorch
    import dasp_pytorch.functional as F

    torch.manual_seed(0)
    sr = 44100
    gain_p, dist_p = dasp_pytorch.Gain(sample_rate=sr), dasp_pytorch.Distortion()
    cfg = dict(sample_rate=sr, samples=2048, batch=2, tracks=3, reverb_ir=4096, reverb_taps=63)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 3, 2048, generator=g) * 0.2

    def mix(x):
        b, tracks, _ = x.shape
        y = torch.stack([F.gain(x[:, i:i + 1], sr, torch.full((b,), -3.0 * i)) for i in range(tracks)], 1).squeeze(2)
        y = F.stereo_bus(F.stereo_panner(y, sr, torch.linspace(0.1, 0.9, tracks).repeat(b, 1)), sr,
                         torch.full((b, tracks), -6.0))
        y = F.distortion(y, sr, torch.full((b, 2), 6.0))
        gains = [torch.full((b,), v) for v in torch.linspace(0.2, 0.8, 12).tolist()]
        decays = [torch.full((b,), 0.5) for _ in range(12)]
        y = F.noise_shaped_reverberation(y, sr, *gains, *decays, torch.full((b,), 0.3), num_samples=4096,
                                         num_bandpass_taps=63)
        y = F.stereo_widener(y, sr, torch.full((b, 1), 0.7))
        z = gain_p.process_normalized(x[:, :1], torch.full((b, 1), 0.5))
        drive = dist_p.denormalize_param_dict(dist_p.extract_param_dict(torch.full((b, 1), 0.5)))["gain_db"]
        z = dist_p.process(z, sr, drive)
        return y, z
    return cfg, mix, {"x": x}


def _ppr_graph(n=12, m=30, seed=1):
    import torch

    g = torch.Generator().manual_seed(seed)
    src, dst = torch.randint(0, n, (m,), generator=g), torch.randint(0, n, (m,), generator=g)
    ring = torch.arange(n)
    return torch.stack([torch.cat([src, ring]), torch.cat([dst, (ring + 1) % n])])


def _ppr_page_rank():
    """torch-ppr's public API as its README uses it: `page_rank` over an edge list of 12 nodes
    (the sparse adjacency built and column-normalized, validated, the power iteration with its
    convergence test and tqdm range), and `personalized_page_rank` for 4 seed nodes with
    `add_identity=True` and `batch_size=2` through torch_max_mem's `MemoryUtilizationMaximizer`
    (its hasher, the batch-size search); in a user function."""
    import torch
    from torch_ppr import page_rank, personalized_page_rank

    cfg = dict(nodes=12, edges=42, seeds=4, batch_size=2, alpha=0.05)
    edge_index = _ppr_graph()

    def rank(edge_index, seeds):
        pr = page_rank(edge_index=edge_index, num_nodes=12, max_iter=50, epsilon=1e-6)
        ppr = personalized_page_rank(edge_index=edge_index, num_nodes=12, indices=seeds, add_identity=True,
                                     batch_size=2, max_iter=50)
        return pr, ppr
    return cfg, rank, {"edge_index": edge_index, "seeds": torch.tensor([0, 3, 5, 7])}


def _ppr_power_iteration():
    """torch-ppr's building blocks as a user composes them: `prepare_num_nodes` from the edge
    list (`.item()` of the max), `edge_index_to_sparse_matrix`, `prepare_page_rank_adjacency`
    with the identity added, `validate_adjacency` (its value range and column-sum checks),
    `prepare_x0` one-hot for 3 seeds, `validate_x`, and `power_iteration` with a dense
    adjacency too; in a user function."""
    from torch_ppr import utils

    cfg = dict(nodes=10, edges=30, seeds=3, alpha=0.1, max_iter=40)
    edge_index = _ppr_graph(n=10, m=20, seed=2)

    def run(edge_index):
        n = utils.prepare_num_nodes(edge_index)
        adj = utils.prepare_page_rank_adjacency(edge_index=edge_index, num_nodes=n, add_identity=True)
        utils.validate_adjacency(adj, n=n)
        x0 = utils.prepare_x0(indices=[1, 4, 8], n=n)
        utils.validate_x(x0, n=n)
        x = utils.power_iteration(adj=adj, x0=x0, alpha=0.1, max_iter=40, epsilon=1e-6)
        dense = adj.to_dense()
        xd = utils.power_iteration(adj=dense, x0=utils.prepare_x0(n=n), alpha=0.1, max_iter=40, epsilon=1e-6)
        return x, xd
    return cfg, run, {"edge_index": edge_index}


# round 35: torchbearer 0.5.5, nbeats-pytorch 1.6.0, pytorch-nlp 0.5.0, rtdl-num-embeddings 0.0.12 and sbi
# 0.27.0, code nobody tuned on, measured before anything was changed for it


def _torchbearer_trial_fit():
    """torchbearer's `Trial` as its quickstart trains with it: a 6-16-3 MLP, SGD with momentum,
    cross entropy, metrics 'acc' and 'loss' (running and epoch means), `with_generators` over a
    24-sample train loader and an 8-sample validation loader (batch 4), callbacks `StepLR` (per
    epoch), `GradientClipping` at 1.0, `L2WeightDecay` and `EarlyStopping` on the validation loss;
    `run` for 2 epochs, verbose 0; in a user function (the trial built outside it)."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    from torchbearer import Trial
    from torchbearer.callbacks import EarlyStopping, GradientClipping, L2WeightDecay, StepLR

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    train = DataLoader(TensorDataset(torch.randn(24, 6, generator=g), torch.randint(0, 3, (24,), generator=g)),
                       batch_size=4)
    val = DataLoader(TensorDataset(torch.randn(8, 6, generator=g), torch.randint(0, 3, (8,), generator=g)),
                     batch_size=4)
    trial = Trial(net, opt, torch.nn.CrossEntropyLoss(), metrics=["acc", "loss"],
                  callbacks=[StepLR(step_size=1, gamma=0.5), GradientClipping(1.0, net.parameters()),
                             L2WeightDecay(1e-4, params=list(net.parameters())),
                             EarlyStopping(monitor="val_loss", patience=2)],
                  verbose=0).with_generators(train_generator=train, val_generator=val)
    cfg = dict(mlp=(6, 16, 3), optimizer="SGD", train=24, val=8, batch=4, epochs=2,
               callbacks=("StepLR", "GradientClipping", "L2WeightDecay", "EarlyStopping"))

    def fit():
        history = trial.run(epochs=2, verbose=0)
        return torch.tensor([h["loss"] for h in history]), net[0].weight.detach().clone()
    return cfg, fit, {}


def _torchbearer_evaluate_predict():
    """torchbearer's `Trial` on tensors as its docs use it: a 5-8-1 regression MLP with Adam and
    MSE, metrics 'mse' and 'loss', `with_train_data`/`with_val_data`/`with_test_data`
    (batch 4, no shuffle), one epoch of `run`, then `evaluate` on the validation data and
    `predict` on the test data; in a user function."""
    import torch
    from torchbearer import Trial

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    g = torch.Generator().manual_seed(2)
    x, y = torch.randn(16, 5, generator=g), torch.randn(16, 1, generator=g)
    xv, yv, xt = torch.randn(8, 5, generator=g), torch.randn(8, 1, generator=g), torch.randn(6, 5, generator=g)
    trial = Trial(net, torch.optim.Adam(net.parameters(), lr=1e-2), torch.nn.MSELoss(), metrics=["mse", "loss"],
                  verbose=0)
    trial.with_train_data(x, y, batch_size=4, shuffle=False).with_val_data(xv, yv, batch_size=4, shuffle=False)
    trial.with_test_data(xt, batch_size=4)
    cfg = dict(mlp=(5, 8, 1), optimizer="Adam", train=16, val=8, test=6, batch=4, epochs=1)

    def run():
        trial.run(epochs=1, verbose=0)
        metrics = trial.evaluate(verbose=0, data_key=None)
        preds = trial.predict(verbose=0)
        return torch.tensor([metrics["val_mse"], metrics["val_loss"]]), preds
    return cfg, run, {}


def _nbeats_fit():
    """nbeats-pytorch's `NBeatsNet` as its README trains it: a trend and a seasonality stack (2
    blocks each, 16 units, backcast 10, forecast 5), `compile(loss="mae", optimizer="adam")`, `fit`
    on numpy windows of a noisy sine (24 samples, batch 8, a validation split) for 2 epochs (its
    loop: numpy batches to tensors, `loss.item()`, the epoch mean and the Keras-like print);
    then `predict` of 4 windows; in a user function (model built outside it)."""
    import random
    import numpy as np
    import torch
    from nbeats_pytorch.model import NBeatsNet

    torch.manual_seed(0)
    net = NBeatsNet(stack_types=(NBeatsNet.TREND_BLOCK, NBeatsNet.SEASONALITY_BLOCK), nb_blocks_per_stack=2,
                    forecast_length=5, backcast_length=10, thetas_dim=(4, 8), hidden_layer_units=16)
    net.compile(loss="mae", optimizer="adam")
    rng = np.random.default_rng(1)
    series = np.sin(np.arange(60) / 3.0) + 0.1 * rng.standard_normal(60)
    xs = np.stack([series[i:i + 10] for i in range(32)])
    ys = np.stack([series[i + 10:i + 15] for i in range(32)])
    cfg = dict(stacks=("trend", "seasonality"), blocks=2, units=16, backcast=10, forecast=5, train=24, val=8,
               batch=8, epochs=2)

    def fit():
        random.seed(0)
        net.fit(xs[:24], ys[:24], validation_data=(xs[24:], ys[24:]), epochs=2, batch_size=8)
        return torch.from_numpy(net.predict(xs[24:28])), net.stacks[0][0].fc1.weight.detach().clone()
    return cfg, fit, {}


def _nbeats_generic_train_step():
    """nbeats-pytorch's blocks in a user's training step: a `NBeatsNet` of a generic stack (2 blocks,
    shared weights) and a seasonality stack (harmonics 4), its forward (backcast residuals and
    forecast sums; the seasonality and trend bases built from numpy each call), MSE to the
    targets, an Adam step written by the user; 2 steps; in a user function."""
    import torch
    from nbeats_pytorch.model import NBeatsNet

    torch.manual_seed(0)
    net = NBeatsNet(stack_types=(NBeatsNet.GENERIC_BLOCK, NBeatsNet.SEASONALITY_BLOCK), nb_blocks_per_stack=2,
                    forecast_length=4, backcast_length=12, thetas_dim=(6, 4), share_weights_in_stack=True,
                    hidden_layer_units=16, nb_harmonics=4)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(8, 12, generator=g), torch.randn(8, 4, generator=g)
    cfg = dict(stacks=("generic", "seasonality"), blocks=2, shared=True, units=16, backcast=12, forecast=4,
               harmonics=4, batch=8, steps=2)

    def step(x, y):
        net.train()
        losses = []
        for _ in range(2):
            opt.zero_grad()
            backcast, forecast = net(x)
            loss = torch.nn.functional.mse_loss(forecast, y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return torch.stack(losses), backcast.detach()
    return cfg, step, {"x": x, "y": y}


def _torchnlp_awd_lstm_train():
    """pytorch-nlp's modules in a user's AWD-LSTM-style language-model training step: an
    embedding, `LockedDropout` on the inputs and outputs, a `WeightDropLSTM` (DropConnect on the
    hidden-to-hidden weights), `Attention` ("general") of the outputs over themselves, a decoder;
    cross entropy, Adam, then its `get_token_accuracy` and `get_accuracy` of the first tokens' predictions,
    the padding index ignored; 2 steps over a batch of 4 sequences of 7 tokens; in a user
    function."""
    import torch
    from torchnlp.metrics import get_accuracy, get_token_accuracy
    from torchnlp.nn import Attention, LockedDropout, WeightDropLSTM

    torch.manual_seed(0)

    class LM(torch.nn.Module):
        def __init__(self, vocab=20, dim=8):
            super().__init__()
            self.embed = torch.nn.Embedding(vocab, dim)
            self.drop_in, self.drop_out = LockedDropout(0.2), LockedDropout(0.2)
            self.lstm = WeightDropLSTM(dim, dim, weight_dropout=0.3)
            self.attn = Attention(dim)
            self.dec = torch.nn.Linear(dim, vocab)

        def forward(self, tokens):
            h, _ = self.lstm(self.drop_in(self.embed(tokens)))
            h = self.drop_out(h)
            q = h.transpose(0, 1).contiguous()
            a, _ = self.attn(q, q)
            return self.dec(a.transpose(0, 1))

    model = LM()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    src = torch.randint(1, 20, (7, 4), generator=g)
    tgt = torch.randint(1, 20, (7, 4), generator=g)
    tgt[5:, 2:] = 0
    cfg = dict(vocab=20, dim=8, seq=7, batch=4, dropout=(0.2, 0.3), steps=2, padding_index=0)

    def train(src, tgt):
        model.train()
        out = []
        for _ in range(2):
            logits = model(src)
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 20), tgt.reshape(-1), ignore_index=0)
            opt.zero_grad()
            loss.backward()
            opt.step()
            pred = logits.argmax(-1)
            tok_acc, _, _ = get_token_accuracy(tgt, pred, ignore_index=0)
            acc, _, _ = get_accuracy(tgt[0][:, None], pred[0][:, None], ignore_index=0)
            out.append(torch.tensor([loss.item(), tok_acc, acc]))
        return torch.stack(out)
    return cfg, train, {"src": src, "tgt": tgt}


def _torchnlp_encode_batch():
    """pytorch-nlp's text utilities as its README batches data: a `WhitespaceEncoder` over 8
    sentences, `encode` and `stack_and_pad_tensors` (to the longest), batches of 3 sorted by
    length (its samplers import `torch._six`, gone), `collate_tensors` of dict rows (labels, lengths), `lengths_to_mask`, a `CNNEncoder` over the
    embedded batch with the mask, `batch_decode` back to text, and `LabelEncoder` of the labels;
    eval; in a user function."""
    import torch
    from torchnlp.encoders import LabelEncoder
    from torchnlp.encoders.text import WhitespaceEncoder, stack_and_pad_tensors
    from torchnlp.nn import CNNEncoder
    from torchnlp.utils import collate_tensors, lengths_to_mask

    torch.manual_seed(0)
    text = ["the cat sat on the mat", "a dog ran", "the quick brown fox jumps over the lazy dog",
            "hello world", "torch compile breaks graphs", "a b c d e", "one more line of text here", "end"]
    labels = ["pos", "neg", "pos", "neu", "neg", "pos", "neu", "pos"]
    enc, lab = WhitespaceEncoder(text), LabelEncoder(labels)
    emb = torch.nn.Embedding(enc.vocab_size, 6).eval()
    cnn = CNNEncoder(6, num_filters=4, ngram_filter_sizes=(2, 3), output_dim=5).eval()
    cfg = dict(sentences=8, vocab=enc.vocab_size, embed=6, filters=4, ngrams=(2, 3), batch=3)

    def run():
        order = sorted(range(len(text)), key=lambda i: len(text[i].split()))
        batches = [order[i:i + 3] for i in range(0, len(order), 3)]
        outs, decoded = [], []
        for idx in batches:
            batch = collate_tensors([{"label": lab.encode(labels[i]), "chars": torch.tensor(len(text[i]))} for i in idx])
            tokens, lengths = stack_and_pad_tensors([enc.encode(text[i]) for i in idx])
            mask = lengths_to_mask(lengths)
            with torch.no_grad():
                outs.append(cnn(emb(tokens), mask=mask.float()) + batch["label"].float()[:, None])
            decoded += enc.batch_decode(tokens, lengths)
        return torch.cat(outs), torch.tensor([len(d) for d in decoded])
    return cfg, run, {}


def _rtdl_num_bins_encoding():
    """rtdl-num-embeddings' preprocessing as its README runs it on a training split: `compute_bins`
    by quantiles (8 bins over 64 rows, 4 over the first 32; a feature of 4 distinct values gets
    fewer bins), each checked by `_check_bins`, then `PiecewiseLinearEncoding` of a batch with both
    bin sets (features of unequal bin counts, its masks and padding); the tree-based bins are
    left out (they do not compile); eval, no grad; in a user function."""
    import torch
    from rtdl_num_embeddings import PiecewiseLinearEncoding, compute_bins

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    X = torch.randn(64, 3, generator=g)
    X[:, 2] = torch.randint(0, 4, (64,), generator=g).float()
    xb = torch.randn(5, 3, generator=g)
    cfg = dict(train=(64, 3), bins=(8, 4), batch=5)

    def run(X, xb):
        qbins = compute_bins(X, n_bins=8)
        tbins = compute_bins(X[:32], n_bins=4)
        with torch.no_grad():
            a = PiecewiseLinearEncoding(qbins)(xb)
            b = PiecewiseLinearEncoding(tbins)(xb)
        return a, b, torch.tensor([len(t) for t in qbins + tbins])
    return cfg, run, {"X": X, "xb": xb}


def _rtdl_num_embeddings_train():
    """rtdl-num-embeddings' embeddings in a user's tabular MLP training step: `PeriodicEmbeddings`
    (lite off and on), `PiecewiseLinearEmbeddings` of quantile bins
    (version "B"), `LinearReLUEmbeddings`, their outputs flattened and concatenated into an MLP,
    MSE, AdamW; 2 steps over a batch of 16 rows of 4 features; in a user function (bins and
    modules built outside it)."""
    import torch
    from rtdl_num_embeddings import (LinearReLUEmbeddings, PeriodicEmbeddings, PiecewiseLinearEmbeddings,
                                     compute_bins)

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    X, y = torch.randn(16, 4, generator=g), torch.randn(16, 1, generator=g)
    embs = torch.nn.ModuleList([PeriodicEmbeddings(4, 6, n_frequencies=8, lite=False),
                                PeriodicEmbeddings(4, 6, n_frequencies=8, lite=True),
                                PiecewiseLinearEmbeddings(compute_bins(X, n_bins=6), 6, activation=True, version="B"),
                                LinearReLUEmbeddings(4, 6)])
    head = torch.nn.Sequential(torch.nn.Linear(4 * 4 * 6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    opt = torch.optim.AdamW(list(embs.parameters()) + list(head.parameters()), lr=1e-3)
    cfg = dict(rows=16, features=4, d_embedding=6, frequencies=8, bins=6, mlp=(96, 16, 1), steps=2)

    def train(X, y):
        losses = []
        for _ in range(2):
            h = torch.cat([e(X).flatten(1) for e in embs], 1)
            loss = torch.nn.functional.mse_loss(head(h), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return torch.stack(losses), head[0].weight.detach().clone()
    return cfg, train, {"X": X, "y": y}


def _sbi_tracker():
    """A TensorBoard tracker writing to a temporary directory: sbi's default writes `sbi-logs/`
    into the working directory (the repository, when the corpus runs)."""
    import atexit
    import shutil
    import tempfile

    from sbi.utils.tracking import TensorBoardTracker
    from torch.utils.tensorboard import SummaryWriter

    logdir = tempfile.mkdtemp(prefix="graphmend-sbi-logs-")
    atexit.register(shutil.rmtree, logdir, ignore_errors=True)
    return TensorBoardTracker(SummaryWriter(logdir))


def _sbi_npe_train_sample():
    """sbi's neural posterior estimation as its README runs it: a 2-d `BoxUniform` prior, a
    linear-Gaussian simulator, 64 simulations, `NPE` with a small mixture-density estimator
    (`posterior_nn("mdn", hidden_features=8, num_components=3)`; the default MAF does not compile), `append_simulations` and `train`
    (batch 16, 2 epochs, validation fraction 0.25, its early-stopping bookkeeping), then
    `build_posterior` and `sample` of 20 draws with `log_prob` of them at an observation;
    in a user function."""
    import torch
    from sbi.inference import NPE
    from sbi.neural_nets import posterior_nn
    from sbi.utils import BoxUniform

    torch.manual_seed(0)
    prior = BoxUniform(low=-2 * torch.ones(2), high=2 * torch.ones(2))
    g = torch.Generator().manual_seed(1)
    theta = prior.sample((64,))
    x = theta + 0.1 * torch.randn(64, 2, generator=g)
    x_o = torch.tensor([[0.5, -0.3]])
    cfg = dict(prior="BoxUniform(-2, 2)^2", simulations=64, estimator="mdn", hidden=8, components=3, batch=16,
               epochs=2, samples=20)
    tracker = _sbi_tracker()

    def run(theta, x, x_o):
        torch.manual_seed(3)
        inference = NPE(prior=prior, density_estimator=posterior_nn("mdn", hidden_features=8, num_components=3),
                        show_progress_bars=False, tracker=tracker)
        est = inference.append_simulations(theta, x).train(training_batch_size=16, max_num_epochs=2,
                                                           validation_fraction=0.25, show_train_summary=False)
        posterior = inference.build_posterior(est)
        s = posterior.sample((20,), x=x_o, show_progress_bars=False)
        return s, posterior.log_prob(s, x=x_o)
    return cfg, run, {"theta": theta, "x": x, "x_o": x_o}


def _sbi_nre_mcmc():
    """sbi's neural ratio estimation (`NRE_A`, a classifier `classifier_nn("mlp", hidden 8)`) trained
    for 2 epochs on 48 simulations, its posterior's `potential` and `log_prob` at an observation,
    and sbi's `ClassifierPosterior`-free utilities a user calls: `process_prior`, `process_simulator`,
    `simulate_for_sbi` (a linear-Gaussian simulator, 16 draws) and `mcmc_transform` of the
    prior (a sigmoid bijection) with its inverse; in a user function."""
    import torch
    from sbi.inference import NRE_A, simulate_for_sbi
    from sbi.neural_nets import classifier_nn
    from sbi.utils import BoxUniform, mcmc_transform
    from sbi.utils.user_input_checks import process_prior, process_simulator

    torch.manual_seed(0)
    prior = BoxUniform(low=-1 * torch.ones(2), high=torch.ones(2))
    g = torch.Generator().manual_seed(1)
    theta = prior.sample((48,))
    x = 2 * theta + 0.1 * torch.randn(48, 2, generator=g)
    x_o = torch.tensor([[0.2, 0.1]])
    cfg = dict(prior="BoxUniform(-1, 1)^2", simulations=48, classifier="mlp", hidden=8, batch=16, epochs=2)
    tracker = _sbi_tracker()

    def run(theta, x, x_o):
        torch.manual_seed(3)
        inference = NRE_A(prior=prior, classifier=classifier_nn("mlp", hidden_features=8), show_progress_bars=False,
                          tracker=tracker)
        est = inference.append_simulations(theta, x).train(training_batch_size=16, max_num_epochs=2,
                                                           show_train_summary=False)
        posterior = inference.build_posterior(est, sample_with="mcmc")
        th = prior.sample((10,))
        lp = posterior.potential(th, x=x_o)
        p, _, _ = process_prior(prior)
        sim = process_simulator(lambda t: 2 * t, p, False)
        th2, x2 = simulate_for_sbi(sim, p, num_simulations=16, show_progress_bar=False)
        tf = mcmc_transform(prior)
        z = tf(th2)
        return lp, x2, tf.inv(z)
    return cfg, run, {"theta": theta, "x": x, "x_o": x_o}


# round 36: torchcast 0.2, tabm 0.0.3, ranger21 0.1.0, torch-ac 1.4.0 and pysdtw 0.0.5, code nobody
# tuned on, measured before anything was changed for it


def _torchcast_transformer_train():
    """torchcast's `EncoderDecoderTransformer` as its README forecasts with it: 2 input channels with
    NaNs in them (`one_hot_encode_nan_inputs`, its `NaNEncoder` zeroing them by a boolean mask), an
    exogenous channel, hidden 16, 2 heads, one encoder and one decoder layer, `TimeLastLayerNorm`, a
    `JointEmbedding` of an hourly `PositionEmbedding` and a `TimeEmbedding` of pandas' frequencies "D"
    and "W" (hourly nanosecond timestamps); forecast 6 steps from 18; its NaN-ignoring `L1Loss` and `mse_loss` (the targets have NaNs:
    its `is_real.all()` / `.any()` branches), Adam; 2 steps over a batch of 4; in a user function."""
    import torch
    from torchcast.nn import EncoderDecoderTransformer, JointEmbedding, PositionEmbedding, TimeEmbedding
    from torchcast.nn.criteria import L1Loss, mse_loss

    torch.manual_seed(0)
    hour = 3600 * 10**9
    emb = JointEmbedding([PositionEmbedding(16, scale=hour), TimeEmbedding(16, ["D", "W"])])
    net = EncoderDecoderTransformer(2, 16, 2, num_encoder_layers=1, num_decoder_layers=1, exogenous_dim=1,
                                    num_heads=2, one_hot_encode_nan_inputs=True, dropout=0.0, embedding=emb)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    crit = L1Loss()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, 2, 18, generator=g)
    x[0, 1, 3:6] = float("nan")
    y = torch.randn(4, 2, 6, generator=g)
    y[1, 0, 2] = float("nan")
    exog = torch.randn(4, 1, 24, generator=g)
    t = (1_700_000_000 * 10**9 + hour * torch.arange(24)).view(1, 1, 24).repeat(4, 1, 1)
    cfg = dict(in_dim=2, hidden=16, out_dim=2, layers=(1, 1), heads=2, exogenous=1, nan_inputs=True,
               embedding=("position(hourly)", "time(D, W)"), t_in=18, t_out=6, batch=4, steps=2)

    def train(x, y, exog, t):
        net.train()
        losses = []
        for _ in range(2):
            pred = net(x.clone(), t_in=t[:, :, :18], exog_in=exog[:, :, :18].clone(), t_out=t[:, :, 18:],
                       exog_out=exog[:, :, 18:].clone())
            loss = crit(pred, y) + 0.5 * mse_loss(pred, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return torch.stack(losses), pred.detach()
    return cfg, train, {"x": x, "y": y, "exog": exog, "t": t}


def _torchcast_series_stats():
    """torchcast's series analysis utilities a user calls on a batch of series: `autocorrelation`
    and `partial_autocorrelation` (8 lags) of series without and with NaNs (its `.any().item()`
    path for masked values), `power_spectral_density` and `cross_spectral_density` (window 16,
    overlap 8), `moving_average` with windows (4, 2), and `continuous_ranked_probability_score`
    of 32 forecast samples; the NaN-ignoring `smooth_l1_loss` and `l1_loss` (sum) of a
    forecast; in a user function."""
    import torch
    from torchcast.nn.criteria import l1_loss, smooth_l1_loss
    from torchcast.utils import (autocorrelation, continuous_ranked_probability_score, cross_spectral_density,
                                 moving_average, partial_autocorrelation, power_spectral_density)

    g = torch.Generator().manual_seed(1)
    s = torch.cumsum(torch.randn(3, 2, 64, generator=g), -1) * 0.1 + torch.sin(torch.arange(64) / 4.0)
    s_nan = s.clone()
    s_nan[0, 0, 10:13] = float("nan")
    samples = torch.randn(32, 3, 2, 8, generator=g)
    cfg = dict(batch=3, channels=2, length=64, lags=8, window=16, overlap=8, ma=(4, 2), samples=32)

    def run(s, s_nan, samples):
        ac = autocorrelation(s, n_lags=8)
        ac_nan = autocorrelation(s_nan, n_lags=8)
        pac = partial_autocorrelation(s, n_lags=8)
        freqs, psd = power_spectral_density(s, window_length=16, overlap=8)
        _, csd = cross_spectral_density(s[:, 0], s[:, 1], window_length=16, overlap=8)
        ma = moving_average(s, (4, 2))
        crps = continuous_ranked_probability_score(s[..., -8:], samples, dim=0)
        target = s_nan[..., -8:]
        losses = torch.stack([smooth_l1_loss(samples.mean(0), target), l1_loss(samples[0], target, reduction="sum"),
                              l1_loss(samples[1], s[..., -8:])])
        return ac, ac_nan, pac, freqs, psd, torch.view_as_real(csd), ma, crps, losses
    return cfg, run, {"s": s, "s_nan": s_nan, "samples": samples}


def _tabm_train_eval():
    """tabm's `TabM.make` as its README trains it: 3 numerical features through rtdl-num-embeddings'
    `PiecewiseLinearEmbeddings` (quantile bins, version "B"), 2 categorical features (one-hot),
    k=4 submodels, 2 blocks of 32, 3 classes; the README's loss (cross entropy over the k
    predictions flattened), AdamW; 2 steps over a batch of 16, then evaluation of the mean of the
    k softmax outputs; in a user function (model built outside it)."""
    import torch
    from rtdl_num_embeddings import PiecewiseLinearEmbeddings, compute_bins
    from tabm import TabM

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    x_num = torch.randn(16, 3, generator=g)
    x_cat = torch.stack([torch.randint(0, 4, (16,), generator=g), torch.randint(0, 2, (16,), generator=g)], 1)
    y = torch.randint(0, 3, (16,), generator=g)
    model = TabM.make(n_num_features=3, cat_cardinalities=[4, 2], d_out=3, k=4, n_blocks=2, d_block=32,
                      num_embeddings=PiecewiseLinearEmbeddings(compute_bins(x_num, n_bins=6), 8, activation=False,
                                                               version="B"))
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=3e-4)
    cfg = dict(num=3, cat=(4, 2), k=4, blocks=2, d_block=32, classes=3, bins=6, d_embedding=8, batch=16, steps=2)

    def run(x_num, x_cat, y):
        model.train()
        losses = []
        for _ in range(2):
            out = model(x_num, x_cat)
            loss = torch.nn.functional.cross_entropy(out.flatten(0, 1), y.repeat_interleave(model.backbone.k))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        model.eval()
        with torch.no_grad():
            proba = torch.softmax(model(x_num, x_cat), dim=-1).mean(1)
        return torch.stack(losses), proba
    return cfg, run, {"x_num": x_num, "x_cat": x_cat, "y": y}


def _tabm_layers():
    """tabm's building blocks a user composes by hand: `ensemble_linear_layers_` and
    `ensemble_batchnorm1d_layers_` turning a user MLP's layers into k=3 ensemble layers,
    `EnsembleView`, a `MLPBackboneBatchEnsemble` (scaling init "random-signs") and a
    `MLPBackboneMiniEnsemble` with `LinearEnsemble` heads, `ElementwiseAffine`, `LayerNormEnsemble`;
    their forwards on a (batch, d) input and on a (batch, k, d) input in eval mode (its
    warning), a regression head; one SGD step of MSE; in a user function."""
    import warnings
    import torch
    from tabm import (ElementwiseAffine, EnsembleView, LayerNormEnsemble, LinearEnsemble, MLPBackboneBatchEnsemble,
                      MLPBackboneMiniEnsemble, ensemble_batchnorm1d_layers_, ensemble_linear_layers_)

    warnings.filterwarnings("ignore", message="When training=False")
    torch.manual_seed(0)
    k = 3
    user = torch.nn.Sequential(torch.nn.Linear(5, 12), torch.nn.BatchNorm1d(12), torch.nn.ReLU(),
                               torch.nn.Linear(12, 1))
    ensemble_linear_layers_(user, k=k)
    ensemble_batchnorm1d_layers_(user, k=k)
    view = EnsembleView(k=k)
    be = MLPBackboneBatchEnsemble(d_in=5, n_blocks=2, d_block=12, dropout=0.0, k=k, tabm_init=True,
                                  scaling_init="random-signs", start_scaling_init_chunks=None)
    mini = MLPBackboneMiniEnsemble(d_in=5, n_blocks=1, d_block=12, dropout=0.0, k=k, affine_bias=True,
                                   affine_scaling_init="random-signs")
    heads = torch.nn.ModuleList([LinearEnsemble(12, 1, k=k), LinearEnsemble(12, 1, k=k)])
    affine = ElementwiseAffine((k, 1), bias=True, scaling_init="ones")
    norm = LayerNormEnsemble(12, k=k)
    params = [p for m in (user, be, mini, heads, affine, norm) for p in m.parameters()]
    opt = torch.optim.SGD(params, lr=1e-2)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(8, 5, generator=g), torch.randn(8, 1, generator=g)
    cfg = dict(k=k, user_mlp=(5, 12, 1), batch_ensemble=(2, 12), mini_ensemble=(1, 12), batch=8)

    def run(x, y):
        for m in (user, be, mini, heads, affine, norm):
            m.train()
        xe = view(x)
        h = be(xe)
        pred = user(xe) + heads[0](norm(h)) + affine(heads[1](mini(xe)))
        loss = torch.nn.functional.mse_loss(pred, y.unsqueeze(1).expand_as(pred))
        opt.zero_grad()
        loss.backward()
        opt.step()
        for m in (user, be, mini, heads, affine, norm):
            m.eval()
        with torch.no_grad():
            ev = heads[0](be(view(xe))).mean(1)
        return loss.detach(), ev
    return cfg, run, {"x": x, "y": y}


def _ranger21_train():
    """ranger21's `Ranger21` as its README sets it up, in a user's training loop: a 6-16-3 MLP,
    `num_epochs=2`, `num_batches_per_epoch=4` (linear warmup, warmdown from 72%), its defaults
    (AdamW core, gradient centralization and normalization, adaptive gradient clipping, stable
    weight decay, positive-negative momentum, norm loss, lookahead every 5 steps), cross
    entropy; 8 steps over batches of 4 (its settings print at construction, the warmup and
    warmdown notices print during them); in a user function (optimizer built outside it)."""
    import contextlib
    import io
    import torch
    from ranger21 import Ranger21

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    with contextlib.redirect_stdout(io.StringIO()):
        opt = Ranger21(net.parameters(), lr=1e-2, num_epochs=2, num_batches_per_epoch=4)
    g = torch.Generator().manual_seed(1)
    xs, ys = torch.randn(8, 4, 6, generator=g), torch.randint(0, 3, (8, 4), generator=g)
    cfg = dict(mlp=(6, 16, 3), lr=1e-2, epochs=2, batches_per_epoch=4, batch=4, steps=8)

    def train(xs, ys):
        losses = []
        for x, y in zip(xs, ys):
            loss = torch.nn.functional.cross_entropy(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return torch.stack(losses), net[0].weight.detach().clone()
    return cfg, train, {"xs": xs, "ys": ys}


def _ranger21_madgrad_abel():
    """ranger21's other engines in a user's regression loop: `Ranger21` with `use_madgrad=True`,
    no softplus, no gradient centralization, no lookahead (its Chebyshev schedule, `use_cheb`, fails
    in its step: `self.num_batches` is never set), and its `Ranger21abel` (its ABEL lr decay from
    the weight norms), each on a 4-8-1 MLP with MSE, 2 epochs of 3 batches of 4; in a user
    function."""
    import contextlib
    import io
    import torch
    from ranger21 import Ranger21, Ranger21abel

    torch.manual_seed(0)
    nets = [torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)) for _ in range(2)]
    with contextlib.redirect_stdout(io.StringIO()):
        opts = [Ranger21(nets[0].parameters(), lr=5e-3, num_epochs=2, num_batches_per_epoch=3, use_madgrad=True,
                         softplus=False, using_gc=False, lookahead_active=False),
                Ranger21abel(nets[1].parameters(), lr=5e-3, num_epochs=2, num_batches_per_epoch=3)]
    g = torch.Generator().manual_seed(1)
    xs, ys = torch.randn(6, 4, 4, generator=g), torch.randn(6, 4, 1, generator=g)
    cfg = dict(mlp=(4, 8, 1), lr=5e-3, epochs=2, batches_per_epoch=3, batch=4, steps=6,
               optimizers=("Ranger21(madgrad)", "Ranger21abel"))

    def train(xs, ys):
        losses = []
        for net, opt in zip(nets, opts):
            for x, y in zip(xs, ys):
                loss = torch.nn.functional.mse_loss(net(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.detach())
        return torch.stack(losses), nets[1][0].weight.detach().clone()
    return cfg, train, {"xs": xs, "ys": ys}


def _torch_ac_env():
    """A tiny deterministic gymnasium environment (4-d observations, 2 actions, episodes of 5
    steps) for torch-ac's algorithms, with one process (its `ParallelEnv` forks one per extra
    environment)."""
    import gymnasium
    import numpy as np

    class Walk(gymnasium.Env):
        observation_space = gymnasium.spaces.Box(low=-10.0, high=10.0, shape=(4,), dtype=np.float32)
        action_space = gymnasium.spaces.Discrete(2)

        def __init__(self):
            self.t, self.pos = 0, 0.0

        def _obs(self):
            return np.array([self.pos, self.t / 5.0, np.sin(self.pos), 1.0], dtype=np.float32)

        def reset(self, seed=None, options=None):
            self.t, self.pos = 0, 0.0
            return self._obs(), {}

        def step(self, action):
            self.t += 1
            self.pos += 1.0 if int(action) == 1 else -0.5
            return self._obs(), float(self.pos > 1.0), self.t >= 5, False, {}
    return Walk()


def _torch_ac_ppo_update():
    """torch-ac's `PPOAlgo` as rl-starter-files trains with it: a recurrent actor-critic (a user
    `RecurrentACModel`: an LSTM cell memory, a categorical policy head and a value head),
    recurrence 2, 8 frames per process, 2 PPO epochs, batch 4; `collect_experiences` (its rollout:
    `dist.sample()`, `action.cpu().numpy()` to the environment, episode bookkeeping with `.item()`,
    GAE) and `update_parameters` (clipped surrogate, value clipping, `.item()` logging, the
    gradient norm, numpy batch permutation); in a user function (algorithm built outside it)."""
    import numpy as np
    import torch
    from torch_ac import PPOAlgo, RecurrentACModel

    class ACModel(torch.nn.Module, RecurrentACModel):
        def __init__(self):
            super().__init__()
            self.cell = torch.nn.LSTMCell(4, 8)
            self.actor = torch.nn.Linear(8, 2)
            self.critic = torch.nn.Linear(8, 1)

        @property
        def memory_size(self):
            return 16

        def forward(self, obs, memory):
            h, c = self.cell(obs, (memory[:, :8], memory[:, 8:]))
            dist = torch.distributions.Categorical(logits=self.actor(h))
            return dist, self.critic(h).squeeze(1), torch.cat([h, c], 1)

    torch.manual_seed(0)
    algo = PPOAlgo([_torch_ac_env()], ACModel(), torch.device("cpu"), num_frames_per_proc=8, recurrence=2,
                   epochs=2, batch_size=4, lr=1e-3)
    cfg = dict(envs=1, obs=4, actions=2, lstm=8, recurrence=2, frames=8, epochs=2, batch=4)

    def run():
        torch.manual_seed(3)
        np.random.seed(3)
        exps, logs1 = algo.collect_experiences()
        logs2 = algo.update_parameters(exps)
        return (exps.advantage, exps.action, torch.tensor([logs2["policy_loss"], logs2["value_loss"],
                                                           logs2["grad_norm"], len(logs1["return_per_episode"])]),
                algo.acmodel.actor.weight.detach().clone())
    return cfg, run, {}


def _torch_ac_a2c_update():
    """torch-ac's `A2CAlgo` with a feed-forward actor-critic (a user `ACModel`: a shared 4-16
    trunk, policy and value heads), a user `preprocess_obss` (numpy observations stacked into a
    tensor), `reshape_reward` (a penalty per step), 6 frames, RMSprop; 2 rounds of
    `collect_experiences` and `update_parameters` (policy and value losses, entropy, the `.item()`
    logs and the gradient norm); in a user function (algorithm built outside it)."""
    import numpy as np
    import torch
    from torch_ac import A2CAlgo, ACModel

    class Model(torch.nn.Module, ACModel):
        def __init__(self):
            super().__init__()
            self.trunk = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh())
            self.actor = torch.nn.Linear(16, 2)
            self.critic = torch.nn.Linear(16, 1)

        def forward(self, obs):
            h = self.trunk(obs)
            return torch.distributions.Categorical(logits=self.actor(h)), self.critic(h).squeeze(1)

    def preprocess(obss, device=None):
        return torch.tensor(np.stack(obss), device=device)

    torch.manual_seed(0)
    algo = A2CAlgo([_torch_ac_env()], Model(), torch.device("cpu"), num_frames_per_proc=6, recurrence=1, lr=5e-3,
                   preprocess_obss=preprocess, reshape_reward=lambda o, a, r, d: r - 0.01)
    cfg = dict(envs=1, obs=4, actions=2, trunk=16, frames=6, rounds=2, optimizer="RMSprop")

    def run():
        torch.manual_seed(3)
        out = []
        for _ in range(2):
            exps, logs1 = algo.collect_experiences()
            logs2 = algo.update_parameters(exps)
            out.append(torch.tensor([logs2["entropy"], logs2["policy_loss"], logs2["value_loss"], logs2["grad_norm"],
                                     sum(logs1["reshaped_return_per_episode"])]))
        return torch.stack(out), exps.returnn, algo.acmodel.critic.weight.detach().clone()
    return cfg, run, {}


def _pysdtw_loss_train():
    """pysdtw's `SoftDTW` as its README uses it on the CPU (`use_cuda=False`: its autograd
    Function runs numba kernels on `.numpy()` copies of the distance matrix, `.item()` of gamma
    and bandwidth) as the loss of a user's sequence model: a GRU encoder-decoder predicting a
    12-step 2-d sequence from a 10-step one, gamma 0.1, the default squared-L2 distance, plus
    a Sakoe-Chiba band of 4 for a second term; Adam; 2 steps over a batch of 4; in a user
    function."""
    import torch
    from pysdtw import SoftDTW

    class Seq2Seq(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = torch.nn.GRU(2, 16, batch_first=True)
            self.dec = torch.nn.Linear(16, 12 * 2)

        def forward(self, x):
            _, h = self.enc(x)
            return self.dec(h[-1]).view(-1, 12, 2)

    torch.manual_seed(0)
    net = Seq2Seq()
    sdtw, sdtw_band = SoftDTW(gamma=0.1, use_cuda=False), SoftDTW(gamma=0.1, use_cuda=False, bandwidth=4)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(4, 10, 2, generator=g), torch.randn(4, 12, 2, generator=g)
    cfg = dict(gru=(2, 16), in_len=10, out_len=12, dims=2, gamma=0.1, bandwidth=4, batch=4, steps=2)

    def train(x, y):
        losses = []
        for _ in range(2):
            pred = net(x)
            loss = sdtw(pred, y).mean() + 0.5 * sdtw_band(pred, y).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return torch.stack(losses), pred.detach()
    return cfg, train, {"x": x, "y": y}


def _pysdtw_packed_distances():
    """pysdtw on variable-length sequences as its README shows: `PackedSequence`s of 3 series of
    lengths 9, 7 and 5 against 3 of lengths 6, 8 and 4 (`pack_padded_sequence`, unpacked by its
    `_prepare_input` with the lengths stacked), `SoftDTW` with its exact distance
    (`pairwise_l2_squared_exact`) and with the default one, gammas 1.0 and 0.01, and the
    soft-DTW divergence a user builds from it (sdtw(x, y) - (sdtw(x, x) + sdtw(y, y)) / 2) on
    padded tensors; under `no_grad`; in a user function."""
    import torch
    from torch.nn.utils.rnn import pack_padded_sequence
    from pysdtw import SoftDTW
    from pysdtw.distance import pairwise_l2_squared_exact

    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(3, 9, 3, generator=g), torch.randn(3, 8, 3, generator=g)
    lx, ly = torch.tensor([9, 7, 5]), torch.tensor([6, 8, 4])
    exact = SoftDTW(gamma=1.0, dist_func=pairwise_l2_squared_exact, use_cuda=False)
    sharp = SoftDTW(gamma=0.01, use_cuda=False)
    cfg = dict(batch=3, dims=3, x_lengths=(9, 7, 5), y_lengths=(6, 8, 4), gammas=(1.0, 0.01))

    def run(x, y, lx, ly):
        px = pack_padded_sequence(x, lx, batch_first=True, enforce_sorted=False)
        py = pack_padded_sequence(y, ly, batch_first=True, enforce_sorted=False)
        a, b = exact(px, py), sharp(px, py)
        div = sharp(x, y[:, :8]) - (sharp(x, x) + sharp(y, y)) / 2
        return a, b, div
    return cfg, run, {"x": x, "y": y, "lx": lx, "ly": ly}

# round 37: neurodiffeq 0.7.0, torchkge 0.17.7, brevitas 0.13.4, hummingbird-ml 0.4.12 and diffsort 0.2.0,
# code nobody tuned on, measured before anything was changed for it


def _neurodiffeq_ode_fit():
    """neurodiffeq's README quickstart: the ODE u' + u = 0 with `IVP(t_0=0, u_0=1)` on [0, 2], a
    `Solver1D` with an `FCNN` (8, 8), noisy equally-spaced training points and equally-spaced
    validation points (16 each, `Generator1D`), `fit` for 3 epochs (its loop: residuals through
    `diff`'s autograd.grad, `loss.item()`, the best-net deepcopy; no progress bar), then
    `get_solution` evaluated at 5 points and the loss history; in a user function (solver
    built outside it)."""
    import torch
    from neurodiffeq import diff
    from neurodiffeq.conditions import IVP
    from neurodiffeq.generators import Generator1D
    from neurodiffeq.networks import FCNN
    from neurodiffeq.solvers import Solver1D

    torch.manual_seed(0)
    solver = Solver1D(ode_system=lambda u, t: [diff(u, t) + u], conditions=[IVP(t_0=0.0, u_0=1.0)],
                      t_min=0.0, t_max=2.0, nets=[FCNN(n_input_units=1, n_output_units=1, hidden_units=(8, 8))],
                      train_generator=Generator1D(16, 0.0, 2.0, method="equally-spaced-noisy"),
                      valid_generator=Generator1D(16, 0.0, 2.0, method="equally-spaced"))
    cfg = dict(ode="u' + u = 0", ivp=(0.0, 1.0), domain=(0.0, 2.0), net=(1, 8, 8, 1), points=16, epochs=3)

    def fit():
        torch.manual_seed(1)
        solver.fit(max_epochs=3, tqdm_file=None)
        sol = solver.get_solution()
        t = torch.linspace(0, 2, 5).reshape(-1, 1)
        return sol(t, to_numpy=False).detach(), torch.tensor(solver.metrics_history["train_loss"])
    return cfg, fit, {}


def _neurodiffeq_laplace_fit():
    """neurodiffeq's 2-d example: Laplace's equation on the unit square with a `DirichletBVP2D`
    (sin(pi y) on x = 0, zero elsewhere), a `Solver2D` with an `FCNN` (8), a 6x6 noisy grid for
    training and an equally-spaced one for validation (`Generator2D`), `fit` for 2 epochs (second
    derivatives by `diff(order=2)`), then `get_solution(best=True)` on 4 points of the diagonal and
    the validation-loss history; in a user function."""
    import torch
    from neurodiffeq import diff
    from neurodiffeq.conditions import DirichletBVP2D
    from neurodiffeq.generators import Generator2D
    from neurodiffeq.networks import FCNN
    from neurodiffeq.solvers import Solver2D

    torch.manual_seed(0)
    cond = DirichletBVP2D(x_min=0, x_min_val=lambda y: torch.sin(torch.pi * y), x_max=1, x_max_val=lambda y: 0,
                          y_min=0, y_min_val=lambda x: 0, y_max=1, y_max_val=lambda x: 0)
    solver = Solver2D(pde_system=lambda u, x, y: [diff(u, x, order=2) + diff(u, y, order=2)], conditions=[cond],
                      xy_min=(0, 0), xy_max=(1, 1), nets=[FCNN(n_input_units=2, n_output_units=1, hidden_units=(8,))],
                      train_generator=Generator2D((6, 6), (0, 0), (1, 1), method="equally-spaced-noisy"),
                      valid_generator=Generator2D((6, 6), (0, 0), (1, 1), method="equally-spaced"))
    cfg = dict(pde="laplace", bvp="DirichletBVP2D", domain=((0, 0), (1, 1)), net=(2, 8, 1), grid=(6, 6), epochs=2)

    def fit():
        torch.manual_seed(1)
        solver.fit(max_epochs=2, tqdm_file=None)
        sol = solver.get_solution(best=True)
        xs = torch.linspace(0, 1, 4)
        return sol(xs, xs, to_numpy=False).detach(), torch.tensor(solver.metrics_history["valid_loss"])
    return cfg, fit, {}


def _torchkge_graph():
    """A small knowledge graph for torchkge: 60 random (head, relation, tail) triples over 12
    entities and 3 relations, as the pandas frame its `KnowledgeGraph` reads, split 60/20/20."""
    import pandas as pd
    import torch
    from torchkge.data_structures import KnowledgeGraph

    g = torch.Generator().manual_seed(1)
    h, r, t = (torch.randint(0, k, (60,), generator=g) for k in (12, 3, 12))
    df = pd.DataFrame({"from": [f"e{i}" for i in h.tolist()], "rel": [f"r{i}" for i in r.tolist()],
                       "to": [f"e{i}" for i in t.tolist()]})
    kg = KnowledgeGraph(df=df)
    torch.manual_seed(2)
    return kg, kg.split_kg(share=0.6, validation=True)


def _torchkge_transe_train():
    """torchkge's README training loop: a `TransEModel` (dim 8, L2), `MarginLoss(0.5)`, Adam, a
    `BernoulliNegativeSampler` corrupting each batch, torchkge's `DataLoader` (batch 8) over the
    training split; 2 epochs, `normalize_parameters` after each; then a `LinkPredictionEvaluator`
    on the test split (`evaluate`, `mrr`, `hit_at_k`); in a user function (model built outside it)."""
    import torch
    from torchkge.evaluation import LinkPredictionEvaluator
    from torchkge.models import TransEModel
    from torchkge.sampling import BernoulliNegativeSampler
    from torchkge.utils import DataLoader, MarginLoss

    kg, (kg_train, kg_val, kg_test) = _torchkge_graph()
    torch.manual_seed(0)
    model = TransEModel(8, kg.n_ent, kg.n_rel, dissimilarity_type="L2")
    crit = MarginLoss(0.5)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sampler = BernoulliNegativeSampler(kg_train)
    loader = DataLoader(kg_train, batch_size=8)
    cfg = dict(triples=60, entities=kg.n_ent, relations=kg.n_rel, dim=8, margin=0.5, batch=8, epochs=2)

    def train():
        torch.manual_seed(3)
        losses = []
        for _ in range(2):
            for batch in loader:
                h, t, r = batch[0], batch[1], batch[2]
                nh, nt = sampler.corrupt_batch(h, t, r)
                opt.zero_grad()
                pos, neg = model(h, t, r, nh, nt)
                loss = crit(pos, neg)
                loss.backward()
                opt.step()
                losses.append(loss.detach())
            model.normalize_parameters()
        ev = LinkPredictionEvaluator(model, kg_test)
        ev.evaluate(b_size=8, verbose=False)
        return torch.stack(losses), torch.tensor([ev.mrr()[0], ev.mrr()[1], ev.hit_at_k(3)[0]])
    return cfg, train, {}


def _torchkge_models_evaluate():
    """torchkge's models scored as its evaluation tutorial does: `DistMultModel`, `ComplExModel`
    and `RESCALModel` (dim 6; `TransHModel` left out: its evaluation's entity projection leaves a
    non-leaf tensor in its parameters, which the next optimizer step cannot compile), one epoch each with `BinaryCrossEntropyLoss` and a
    `UniformNegativeSampler`, then `LinkPredictionEvaluator` (filtered ranks, `mrr`, `hit_at_k`)
    and `TripletClassificationEvaluator` (thresholds fit on the validation split, `accuracy`)
    on the test split; in a user function (models built outside it)."""
    import torch
    from torchkge.evaluation import LinkPredictionEvaluator, TripletClassificationEvaluator
    from torchkge.models import ComplExModel, DistMultModel, RESCALModel
    from torchkge.sampling import UniformNegativeSampler
    from torchkge.utils import BinaryCrossEntropyLoss, DataLoader

    kg, (kg_train, kg_val, kg_test) = _torchkge_graph()
    torch.manual_seed(0)
    models = [DistMultModel(6, kg.n_ent, kg.n_rel), ComplExModel(6, kg.n_ent, kg.n_rel),
              RESCALModel(6, kg.n_ent, kg.n_rel)]
    opts = [torch.optim.Adam(m.parameters(), lr=1e-2) for m in models]
    crit = BinaryCrossEntropyLoss()
    sampler = UniformNegativeSampler(kg_train)
    loader = DataLoader(kg_train, batch_size=8)
    cfg = dict(models=("DistMult", "ComplEx", "RESCAL"), dim=6, loss="BCE", sampler="uniform", epochs=1, batch=8)

    def run():
        torch.manual_seed(3)
        scores = []
        for model, opt in zip(models, opts):
            for batch in loader:
                h, t, r = batch[0], batch[1], batch[2]
                nh, nt = sampler.corrupt_batch(h, t, r)
                opt.zero_grad()
                pos, neg = model(h, t, r, nh, nt)
                loss = crit(pos, neg)
                loss.backward()
                opt.step()
            ev = LinkPredictionEvaluator(model, kg_test)
            ev.evaluate(b_size=8, verbose=False)
            tc = TripletClassificationEvaluator(model, kg_val, kg_test)
            tc.evaluate(b_size=8)
            scores.append(torch.tensor([ev.mrr()[1], ev.hit_at_k(5)[1], tc.accuracy(b_size=8)]))
        return torch.stack(scores)
    return cfg, run, {}


def _brevitas_qat_train():
    """brevitas' quantization-aware training as its README builds a network: `QuantIdentity` (8
    bits) on the input, a `QuantConv2d` (4-bit weights), `QuantReLU` (4 bits), a max pool,
    a `QuantLinear` (4-bit weights, bias); cross entropy and SGD, 2 steps over a batch of 4 8x8
    images, then an eval pass; plain tensors between layers (a `QuantTensor` returned does not
    compile); in a user function (network built outside it)."""
    import torch
    import brevitas.nn as qnn

    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = qnn.QuantIdentity(bit_width=8)
            self.conv = qnn.QuantConv2d(1, 4, 3, weight_bit_width=4, bias=False)
            self.relu = qnn.QuantReLU(bit_width=4)
            self.pool = torch.nn.MaxPool2d(2)
            self.fc = qnn.QuantLinear(4 * 3 * 3, 3, bias=True, weight_bit_width=4)

        def forward(self, x):
            return self.fc(self.pool(self.relu(self.conv(self.inp(x)))).flatten(1))

    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(4, 1, 8, 8, generator=g), torch.randint(0, 3, (4,), generator=g)
    cfg = dict(input_bits=8, weight_bits=4, act_bits=4, image=(1, 8, 8), batch=4, steps=2)

    def train(x, y):
        net.train()
        losses = []
        for _ in range(2):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        net.eval()
        with torch.no_grad():
            out = net(x)
        return torch.stack(losses), out
    return cfg, train, {"x": x, "y": y}


def _brevitas_calibrate_mha():
    """brevitas' post-training calibration as its PTQ examples run it: a network of
    `QuantIdentity`, a `QuantLinear` embedding (6 to 8), `QuantMultiheadAttention` (2 heads) and a
    `QuantLinear` head; `calibration_mode` over 2 batches of 2 sequences (its statistics collected,
    then the scales frozen), then inference on all 4; eval, no grad; in a user function (a
    `QuantLSTM` in place of the embedding made the entry run past 6 minutes under coverage)."""
    import torch
    import brevitas.nn as qnn
    from brevitas.graph.calibrate import calibration_mode

    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = qnn.QuantIdentity(bit_width=8)
            self.emb = qnn.QuantLinear(6, 8, bias=True, weight_bit_width=8)
            self.mha = qnn.QuantMultiheadAttention(8, 2, batch_first=True)
            self.fc = qnn.QuantLinear(8, 3, bias=True, weight_bit_width=4)

        def forward(self, x):
            h = self.emb(self.inp(x))
            a, _ = self.mha(h, h, h)
            return self.fc(a.mean(1))

    net = Net().eval()
    x = torch.randn(4, 5, 6, generator=torch.Generator().manual_seed(1))
    cfg = dict(embedding=(6, 8), heads=2, classes=3, seq=5, calibration_batches=2, batch=2)

    def run(x):
        with torch.no_grad():
            with calibration_mode(net):
                for i in range(2):
                    net(x[2 * i:2 * i + 2])
            return net(x)
    return cfg, run, {"x": x}


def _hummingbird_sklearn():
    """Three small scikit-learn models fitted on 40 rows of 5 features: a random forest (4 trees,
    depth 3), gradient boosting regression (4 trees, depth 2) and a scaler + logistic-regression
    pipeline."""
    import numpy as np
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    rf = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(X, y)
    gb = GradientBoostingRegressor(n_estimators=4, max_depth=2, random_state=0).fit(X, X[:, 2])
    lr = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    return X, rf, gb, lr


def _hummingbird_convert_predict():
    """hummingbird-ml's README: `convert(model, "torch")` of a fitted random forest, gradient
    boosting regressor and scaler + logistic-regression pipeline (its parsing of the sklearn
    objects, the tree and linear operator converters, the torch container), then `predict` and
    `predict_proba` of 8 rows (numpy in and out); in a user function (sklearn models fitted
    outside it)."""
    import torch
    from hummingbird.ml import convert

    X, rf, gb, lr = _hummingbird_sklearn()
    cfg = dict(rows=40, features=5, models=("RandomForestClassifier", "GradientBoostingRegressor",
                                            "StandardScaler+LogisticRegression"), batch=8)

    def run():
        out = []
        for m in (rf, gb, lr):
            hb = convert(m, "torch")
            out.append(torch.as_tensor(hb.predict(X[:8])))
            if hasattr(m, "predict_proba"):
                out.append(torch.as_tensor(hb.predict_proba(X[:8])))
        return out
    return cfg, run, {}


def _hummingbird_tree_strategies():
    """hummingbird-ml's converted models called on tensors: the random forest converted with each
    tree strategy (`tree_implementation` "gemm", "tree_trav", "perf_tree_trav") and the gradient
    boosting regressor (default), their torch modules' `predict`/`predict_proba` on a batch of 8
    rows given as a torch tensor; no grad; in a user function (conversion outside it)."""
    import torch
    from hummingbird.ml import convert

    X, rf, gb, lr = _hummingbird_sklearn()
    models = [convert(rf, "torch", extra_config={"tree_implementation": k}) for k in ("gemm", "tree_trav",
                                                                                       "perf_tree_trav")]
    reg = convert(gb, "torch")
    x = torch.from_numpy(X[8:16])
    cfg = dict(strategies=("gemm", "tree_trav", "perf_tree_trav"), regressor="GradientBoostingRegressor", batch=8)

    def run(x):
        out = []
        for m in models:
            out.append(torch.as_tensor(m.predict(x)))
            out.append(torch.as_tensor(m.predict_proba(x)))
        out.append(torch.as_tensor(reg.predict(x)))
        return out
    return cfg, run, {"x": x}


def _diffsort_ranking_train():
    """diffsort's README use in a user's learning-to-rank step: a linear scorer of 5 features for
    8 items, a `DiffSortNet("bitonic", 8, steepness=10)` over the scores, binary cross entropy of
    its permutation matrices against the true ranking's one-hot permutation, Adam; 2 steps over a
    batch of 3 lists; in a user function."""
    import torch
    from diffsort import DiffSortNet

    torch.manual_seed(0)
    sorter = DiffSortNet("bitonic", 8, steepness=10)
    scorer = torch.nn.Linear(5, 1)
    opt = torch.optim.Adam(scorer.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    feats = torch.randn(3, 8, 5, generator=g)
    ranks = torch.argsort(feats[..., 0] + 0.1 * torch.randn(3, 8, generator=g), -1)
    cfg = dict(sorter="bitonic", n=8, steepness=10, features=5, lists=3, steps=2)

    def train(feats, ranks):
        target = torch.nn.functional.one_hot(ranks, 8).float().transpose(-2, -1)
        losses = []
        for _ in range(2):
            scores = scorer(feats).squeeze(-1)
            _, perm = sorter(scores)
            loss = torch.nn.functional.binary_cross_entropy(perm, target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return torch.stack(losses), scorer.weight.detach().clone()
    return cfg, train, {"feats": feats, "ranks": ranks}


def _diffsort_distributions():
    """diffsort's sorting networks with each relaxation: `DiffSortNet` of type "odd_even" (6 wires)
    and "bitonic" (8 and, padded, 5 wires) with the "cauchy", "logistic_phi", "gaussian", "reciprocal"
    and "optimal" distributions (ART lambda 0.25 where it applies), sorted values and permutation
    matrices of a batch of 2; eval; in a user function (networks built outside it)."""
    import torch
    from diffsort import DiffSortNet

    torch.manual_seed(0)
    nets = [DiffSortNet("odd_even", 6, steepness=5, distribution="cauchy"),
            DiffSortNet("odd_even", 6, steepness=5, distribution="logistic_phi", art_lambda=0.25),
            DiffSortNet("bitonic", 8, steepness=8, distribution="gaussian"),
            DiffSortNet("bitonic", 8, steepness=8, distribution="reciprocal"),
            DiffSortNet("bitonic", 5, steepness=8, distribution="optimal")]
    g = torch.Generator().manual_seed(1)
    xs = {6: torch.randn(2, 6, generator=g), 8: torch.randn(2, 8, generator=g), 5: torch.randn(2, 5, generator=g)}
    cfg = dict(networks=("odd_even 6", "bitonic 8", "bitonic 5"),
               distributions=("cauchy", "logistic_phi", "gaussian", "reciprocal", "optimal"), batch=2)

    def run(x6, x8, x5):
        out = []
        for net, x in zip(nets, (x6, x6, x8, x8, x5)):
            s, p = net(x)
            out += [s, p]
        return out
    return cfg, run, {"x6": xs[6], "x8": xs[8], "x5": xs[5]}


_D = "diffusers==0.42.1"
# pykan's files the KAN entries check (not its plotting and symbolic-fit helpers)


def _SB3C(algo):
    """The check list of an sb3-contrib entry: its algorithm, sb3-contrib's common code and the parts of
    stable-baselines3 its policies run through."""
    return ["sb3_contrib/common", f"sb3_contrib/{algo}", "stable_baselines3/common/policies.py",
            "stable_baselines3/common/distributions.py", "stable_baselines3/common/torch_layers.py",
            "stable_baselines3/common/preprocessing.py"]


_STRUCT = ["torch_struct/" + f for f in ("distributions.py", "helpers.py", "linearchain.py", "deptree.py",
                                         "semirings")]
_TLTORCH = ["tltorch/factorized_layers", "tltorch/factorized_tensors", "tltorch/functional", "tltorch/utils",
            "tensorly/tenalg", "tensorly/cp_tensor.py", "tensorly/tucker_tensor.py", "tensorly/base.py"]
_NEURALOP = ["neuralop/models", "neuralop/layers", "neuralop/losses"]
_TORCHANI = ["torchani/" + f for f in ("arch.py", "aev", "nn", "neighbors.py", "cutoffs.py", "grad.py", "sae.py",
                                       "potentials", "utils.py", "tuples.py", "electro.py", "_core.py")]
_PYKEEN = ["pykeen/models", "pykeen/nn", "pykeen/losses.py", "pykeen/sampling", "pykeen/regularizers.py",
           "pykeen/utils.py", "pykeen/triples/triples_factory.py"]
_RECHUB = ["torch_rechub/basic", "torch_rechub/models/ranking"]
_E2CNN = ["e2cnn/nn", "e2cnn/kernels", "e2cnn/gspaces", "e2cnn/group"]
_SKORCH = ["skorch/net.py", "skorch/classifier.py", "skorch/utils.py", "skorch/callbacks", "skorch/setter.py"]
_IGNITE = ["ignite/engine", "ignite/metrics/metric.py", "ignite/metrics/accuracy.py", "ignite/metrics/precision.py",
           "ignite/metrics/recall.py", "ignite/metrics/fbeta.py", "ignite/metrics/top_k_categorical_accuracy.py",
           "ignite/metrics/confusion_matrix.py", "ignite/metrics/loss.py", "ignite/metrics/mean_squared_error.py",
           "ignite/metrics/metrics_lambda.py", "ignite/distributed", "ignite/utils.py"]
_ROMA = ["roma"]
_SCHEDULEFREE = ["schedulefree/adamw_schedulefree.py", "schedulefree/sgd_schedulefree.py",
                 "schedulefree/wrap_schedulefree.py"]
_TH = ["torch_harmonics/sht.py", "torch_harmonics/convolution.py", "torch_harmonics/_disco_convolution.py",
       "torch_harmonics/resample.py", "torch_harmonics/legendre.py", "torch_harmonics/quadrature.py",
       "torch_harmonics/filter_basis.py", "torch_harmonics/examples/models", "torch_harmonics/examples/losses.py"]
_FM = ["flow_matching", "torchdiffeq"]
_PTWT = ["ptwt"]
_TP = ["torch_pruning/pruner", "torch_pruning/dependency", "torch_pruning/_helpers.py", "torch_pruning/ops.py"]
_TORCHSURV = ["torchsurv/loss", "torchsurv/metrics", "torchsurv/stats", "torchsurv/tools"]
_CAPTUM = ["captum/attr", "captum/_utils", "captum/log"]
_GALORE = ["galore_torch/adamw.py", "galore_torch/adafactor.py", "galore_torch/galore_projector.py"]
_MADGRAD = ["madgrad/madgrad.py", "madgrad/mirror_madgrad.py"]
_TORCHBNN = ["torchbnn/modules", "torchbnn/functional.py", "torchbnn/utils/freeze_model.py"]
_ROTARY = ["rotary_embedding_torch/rotary_embedding_torch.py"]
_TORCH_KMEANS = ["torch_kmeans/clustering/kmeans.py", "torch_kmeans/clustering/soft_kmeans.py", "torch_kmeans/utils"]
_DADAPT = ["dadaptation"]
_CAME = ["came_pytorch"]
_RANGER = ["pytorch_ranger"]
_HC = ["hyper_connections/hyper_connections.py", "hyper_connections/manifold_constrained_hyper_connections.py"]
_TORCH_PCA = ["torch_pca"]
_HEAVYBALL = ["heavyball"]
_TORCHJD = ["torchjd/aggregation", "torchjd/scalarization", "torchjd/_linalg"]
_TORCHBAYESIAN = ["torchbayesian/bnn"]
_TORCH_CGD = ["torch_cgd"]
_TORCH_KF = ["torch_kf"]
_TORCHRBF = ["torchrbf/RBFInterpolator.py", "torchrbf/radial_fn.py"]
_TORCHDR = ["torchdr/" + f for f in ("affinity", "neighbor_embedding", "eval", "utils", "spectral_embedding",
                                     "distance/base.py", "base.py", "affinity_matcher.py")]
_OPTIMI = ["optimi"]
_TLM = ["torch_levenberg_marquardt/" + f for f in ("training.py", "damping.py", "loss.py", "selection.py", "tree.py")]
_PYWAVELETS = ["pytorch_wavelets"]
_TNTORCH = ["tntorch"]
_INTERPOL = ["interpol/" + f for f in ("api.py", "autograd.py", "backend.py", "bounds.py", "coeff.py", "iso0.py",
                                       "iso1.py", "jit_utils.py", "jitfields.py", "nd.py", "pushpull.py", "resize.py",
                                       "restrict.py", "splines.py", "utils.py")]
_TORCHNMF = ["torchnmf"]
_LINODE = ["torch_linode"]
_XITORCH = ["xitorch"]
_TORCHPME = ["torchpme/calculators", "torchpme/lib", "torchpme/potentials", "torchpme/prefactors.py",
             "torchpme/_utils.py"]
_PYCOX = ["pycox/models", "torchtuples/practical.py"]
_TORCHHD = ["torchhd/" + f for f in ("functional.py", "tensors", "embeddings.py", "models.py", "memory.py", "types.py")]
_PK = ["pytorch_kinematics/chain.py", "pytorch_kinematics/frame.py", "pytorch_kinematics/ik.py",
       "pytorch_kinematics/jacobian.py", "pytorch_kinematics/transforms"]
_TORCHIMIZE = ["torchimize/functions"]
_TORCHLIE = ["torchlie"]
_POSTERIORS = ["posteriors"]
_CHERRY = ["cherry/" + f for f in ("td.py", "pg.py", "_torch.py", "_utils.py", "debug.py", "algorithms",
                                   "distributions.py", "experience_replay.py", "nn")]
_HIGHER = ["higher"]
_PYHESSIAN = ["pyhessian"]
_GEOTORCH = ["geotorch"]
_TSGU = ["torchsparsegradutils/" + f for f in ("sparse_solve.py", "sparse_matmul.py", "utils")]
_TORCHEVAL = ["torcheval/metrics"]
_PYTHAE = ["pythae/models/" + f for f in ("base", "nn", "rhvae", "hvae", "vae", "vamp", "svae")]
_TORCHSTAIN = ["torchstain/torch", "torchstain/base"]
_LAMPE = ["lampe/inference", "lampe/utils.py", "lampe/masks.py", "lampe/nn.py"]
_LR_FINDER = ["torch_lr_finder"]
_DEEPCTR = ["deepctr_torch/models/basemodel.py", "deepctr_torch/models/deepfm.py", "deepctr_torch/models/dcn.py",
            "deepctr_torch/inputs.py", "deepctr_torch/callbacks.py", "deepctr_torch/layers"]
_WARMUP = ["pytorch_warmup"]
_ACCEL = ["pytorch_accelerated/trainer.py", "pytorch_accelerated/callbacks.py", "pytorch_accelerated/tracking.py",
          "pytorch_accelerated/schedulers", "pytorch_accelerated/run_config.py", "pytorch_accelerated/utils.py"]
_RTDL = ["rtdl_revisiting_models.py"]
_TORCHKERAS = ["torchkeras/kerasmodel.py", "torchkeras/utils.py", "torchkeras/pbar.py"]
_TNT = ["torchtnt/framework", "torchtnt/utils/timer.py", "torchtnt/utils/progress.py",
        "torchtnt/utils/early_stop_checker.py", "torchtnt/utils/device.py", "torchtnt/utils/prepare_module.py",
        "torchtnt/utils/precision.py", "torchtnt/utils/distributed.py", "torchtnt/utils/tqdm.py",
        "torchtnt/utils/lr_scheduler.py"]
_SKRL = ["skrl/agents/torch/base.py", "skrl/agents/torch/dqn", "skrl/agents/torch/ppo", "skrl/memories/torch",
         "skrl/models/torch", "skrl/resources/preprocessors/torch", "skrl/resources/schedulers/torch",
         "skrl/utils/__init__.py", "skrl/utils/spaces/torch"]
_TORCHFM = ["torchfm/layer.py", "torchfm/model"]
_DASP = ["dasp_pytorch"]
_PPR = ["torch_ppr"]
_TORCHBEARER = ["torchbearer/trial.py", "torchbearer/callbacks", "torchbearer/metrics", "torchbearer/state.py",
                "torchbearer/bases.py", "torchbearer/cv_utils.py"]
_NBEATS = ["nbeats_pytorch"]
_TORCHNLP = ["torchnlp/nn", "torchnlp/metrics/accuracy.py", "torchnlp/encoders", "torchnlp/utils.py"]
_RTDL_NUM = ["rtdl_num_embeddings.py"]
_SBI = ["sbi/inference", "sbi/neural_nets", "sbi/utils", "sbi/samplers"]
_TORCHCAST = ["torchcast/nn", "torchcast/utils"]
_TABM = ["tabm.py"]
_RANGER21 = ["ranger21"]
_TORCH_AC = ["torch_ac"]
_PYSDTW = ["pysdtw"]
# round 37
_NEURODIFFEQ = ["neurodiffeq/solvers.py", "neurodiffeq/conditions.py", "neurodiffeq/generators.py",
                "neurodiffeq/networks.py", "neurodiffeq/neurodiffeq.py", "neurodiffeq/solvers_utils.py",
                "neurodiffeq/losses.py", "neurodiffeq/operators.py"]
_TORCHKGE = ["torchkge"]
_BREVITAS = ["brevitas/nn", "brevitas/core", "brevitas/proxy", "brevitas/function", "brevitas/graph/calibrate.py",
             "brevitas/quant_tensor", "brevitas/utils"]
_HUMMINGBIRD = ["hummingbird/ml"]
_DIFFSORT = ["diffsort"]
_POUTYNE = ["poutyne/framework/model.py", "poutyne/framework/metrics", "poutyne/framework/callbacks",
            "poutyne/framework/iterators.py", "poutyne/utils.py", "poutyne/framework/optimizers.py"]
_TENSORDICT = ["tensordict/" + f for f in ("_td.py", "base.py", "_indexing.py", "_lazy.py", "_torch_func.py", "utils.py",
                                          "nn/common.py", "nn/probabilistic.py", "nn/sequence.py", "nn/utils.py",
                                          "nn/distributions")]
_KAN_FILES = ["kan/MultKAN.py", "kan/KANLayer.py", "kan/Symbolic_KANLayer.py", "kan/spline.py", "kan/utils.py"]

ENTRIES = {e.name: e for e in [
    Entry("diffusers-unet2d-cond", "diffusers", _D, "UNet2DConditionModel (cross-attention UNet), forward",
          _diffusers_unet2d_cond, ["diffusers/models"], loggers=("diffusers",)),
    Entry("diffusers-vae", "diffusers", _D, "AutoencoderKL, encode+decode forward", _diffusers_vae,
          ["diffusers/models"], loggers=("diffusers",)),
    Entry("diffusers-flux", "diffusers", _D, "FluxTransformer2DModel (MM-DiT, RoPE), forward", _diffusers_flux,
          ["diffusers/models"], loggers=("diffusers",)),
    Entry("diffusers-dit", "diffusers", _D, "DiTTransformer2DModel (class-conditional DiT), forward",
          _diffusers_dit, ["diffusers/models"], loggers=("diffusers",)),
    Entry("diffusers-euler-step", "diffusers", _D, "EulerDiscreteScheduler.step (a sampler step)",
          _diffusers_euler_step, ["diffusers/schedulers"], loggers=("diffusers",), scope="module"),
    Entry("diffusers-ddim-step", "diffusers", _D, "DDIMScheduler.step (a sampler step)",
          _diffusers_ddim_step, ["diffusers/schedulers"], loggers=("diffusers",), scope="module"),
    Entry("x-transformers-decoder", "x_transformers", "x-transformers==2.31.10",
          "TransformerWrapper(Decoder) with rotary embeddings, forward", _x_transformers_decoder,
          ["x_transformers"]),
    Entry("x-transformers-train", "x_transformers", "x-transformers==2.31.10",
          "TransformerWrapper(Decoder): a training step (loss, backward, SGD)", _x_transformers_train,
          ["x_transformers"], grad=True, training=True),
    Entry("vq-train", "vector_quantize_pytorch", "vector-quantize-pytorch==1.32.0",
          "VectorQuantize in training mode (EMA codebook update)", _vector_quantize_train,
          ["vector_quantize_pytorch"], training=True),
    Entry("residual-vq", "vector_quantize_pytorch", "vector-quantize-pytorch==1.32.0",
          "ResidualVQ, eval forward", _vector_quantize_eval, ["vector_quantize_pytorch"]),
    Entry("st-moe", "st_moe_pytorch", "st-moe-pytorch==0.1.8", "MoE (ST-MoE top-2 routing), eval forward",
          _st_moe, ["st_moe_pytorch"]),
    Entry("mambapy", "mambapy", "mambapy==1.2.0", "Mamba (pure-PyTorch selective scan), forward", _mambapy,
          ["mambapy"]),
    Entry("torchdiffeq-dopri5", "torchdiffeq", "torchdiffeq==0.2.5",
          "odeint with the adaptive dopri5 solver on a small MLP vector field", _torchdiffeq("dopri5"),
          ["torchdiffeq"], scope="module"),
    Entry("kornia-augment", "kornia", "kornia==0.9.0",
          "AugmentationSequential(hflip, color jitter, affine) on a batch, forward", _kornia_augment, ["kornia"],
          scope="module"),
    Entry("kornia-ops", "kornia", "kornia==0.9.0", "gaussian_blur2d, rotate, rgb_to_hsv, sobel in a user function",
          _kornia_ops, ["kornia"], scope="module"),
    Entry("torchsde-euler", "torchsde", "torchsde==0.2.6", "sdeint (Euler-Maruyama) on a small neural SDE",
          _torchsde, ["torchsde"], scope="module"),
    Entry("reformer-lm", "reformer_pytorch", "reformer-pytorch==1.4.4", "ReformerLM (LSH attention), eval forward",
          _reformer, ["reformer_pytorch"]),
    Entry("gpytorch-predict", "gpytorch", "gpytorch==1.15.2", "ExactGP (RBF) posterior mean and variance",
          _gpytorch(False), ["gpytorch", "linear_operator"], scope="module", also=("linear_operator",)),
    Entry("gpytorch-mll", "gpytorch", "gpytorch==1.15.2", "ExactGP marginal log likelihood (training mode)",
          _gpytorch(True), ["gpytorch", "linear_operator"], training=True, scope="module",
          also=("linear_operator",)),
    Entry("zuko-nsf", "zuko", "zuko==1.6.0", "NSF (conditional spline flow): log_prob in a user function", _zuko,
          ["zuko"], scope="module"),
    Entry("e3nn-tp", "e3nn", "e3nn==0.6.0", "FullyConnectedTensorProduct, forward", _e3nn, ["e3nn"]),
    Entry("optim-lamb", "torch_optimizer", "torch-optimizer==0.3.0", "Lamb.step() on two parameters",
          _optimizer("Lamb"), ["torch_optimizer"], scope="module"),
    Entry("optim-adabelief", "torch_optimizer", "torch-optimizer==0.3.0", "AdaBelief.step() on two parameters",
          _optimizer("AdaBelief"), ["torch_optimizer"], scope="module"),
    Entry("lucidrains-moe", "mixture_of_experts", "mixture-of-experts==0.2.3",
          "MoE (top-2 gating with capacity), eval forward", _moe, ["mixture_of_experts"]),
    Entry("nflows-rq-coupling", "nflows", "nflows==0.14",
          "rational-quadratic spline coupling transform, forward (inputs partly outside the tail bound)",
          _nflows, ["nflows"]),
    Entry("entmax-sparsemax", "entmax", "entmax==1.3", "Sparsemax with partial sorting (k=3), forward", _entmax,
          ["entmax"]),
    Entry("pml-losses", "pytorch_metric_learning", "pytorch-metric-learning==2.8.1",
          "five metric-learning losses on one batch, summed in a user function", _pml,
          ["pytorch_metric_learning"]),
    Entry("torchmetrics-eval", "torchmetrics", "torchmetrics==1.9.0",
          "six metric objects reset, updated and computed in a user's validation step", _torchmetrics,
          ["torchmetrics"], scope="module"),
    Entry("pytorch-crf", "torchcrf", "pytorch-crf==0.7.2",
          "CRF negative log likelihood and Viterbi decode in a user's tagger", _pytorch_crf, ["torchcrf"],
          scope="module"),
    Entry("torchode-dopri5", "torchode", "torchode==1.0.1",
          "AutoDiffAdjoint(Dopri5, IntegralController).solve on a batch of two problems", _torchode,
          ["torchode"], scope="module"),
    Entry("normflows-realnvp", "normflows", "normflows==1.7.3",
          "Real NVP with ActNorm: log_prob in a user function", _normflows, ["normflows"], scope="module"),
    Entry("pyg-gcn-gat", "torch_geometric", "torch-geometric==2.8.1",
          "GCNConv, GATConv and global_mean_pool in a user's graph classifier", _pyg_gnn, ["torch_geometric"],
          scope="module"),
    Entry("pyg-topk-pool", "torch_geometric", "torch-geometric==2.8.1",
          "SAGEConv, TopKPooling and global_max_pool in a user's graph classifier", _pyg_topk,
          ["torch_geometric"], scope="module"),
    Entry("geomloss-sinkhorn", "geomloss", "geomloss==0.3.1",
          "SamplesLoss('sinkhorn', tensorized) between two batches of point clouds", _geomloss("sinkhorn"),
          ["geomloss"], scope="module"),
    Entry("nnaudio-features", "nnAudio", "nnaudio==0.3.4",
          "MelSpectrogram, CQT1992v2 and an STFT/iSTFT round trip in a user's audio front end", _nnaudio,
          ["nnAudio"], scope="module"),
    Entry("torchcde-rk4", "torchcde", "torchcde==0.2.5",
          "a neural CDE: Hermite cubic spline, cdeint (rk4), readout, in a user function", _torchcde,
          ["torchcde"], scope="module"),
    Entry("monai-seg-step", "monai", "monai==1.6.1",
          "UNet, DiceCE and focal losses, Dice and generalized Dice in a user's segmentation step", _monai_seg,
          ["monai/losses", "monai/metrics", "monai/networks"], scope="module"),
    Entry("monai-sliding-window", "monai", "monai==1.6.1",
          "sliding_window_inference of a UNet (Gaussian blending) in a user function", _monai_sliding,
          ["monai/inferers", "monai/data", "monai/networks"], scope="module"),
    Entry("sb3-ppo-loss", "stable_baselines3", "stable-baselines3==2.9.2",
          "MultiInputActorCriticPolicy.evaluate_actions in a user's PPO loss", _sb3_ppo,
          ["stable_baselines3/common"], scope="module"),
    Entry("sb3-sac-gsde", "stable_baselines3", "stable-baselines3==2.9.2",
          "SAC actor (gSDE) action_log_prob and twin critics in a user's actor loss", _sb3_sac,
          ["stable_baselines3/common", "stable_baselines3/sac"], scope="module"),
    Entry("tabnet-train", "pytorch_tabnet", "pytorch-tabnet==4.1.0",
          "TabNet (categorical embeddings, entmax masks, ghost batch norm), training-mode forward", _tabnet,
          ["pytorch_tabnet"], training=True),
    Entry("performer-lm", "performer_pytorch", "performer-pytorch==1.1.4",
          "PerformerLM (FAVOR+ and local attention, feature redraw every 2 calls), training-mode forward",
          _performer, ["performer_pytorch"], training=True),
    Entry("pyro-map-elbo", "pyro", "pyro-ppl==1.9.2",
          "Trace_ELBO.differentiable_loss of a Student-t regression with an AutoDelta guide (MAP)", _pyro_map,
          ["pyro/infer", "pyro/poutine", "pyro/distributions", "pyro/nn", "pyro/ops", "pyro/primitives.py",
           "pyro/util.py", "pyro/settings.py"], grad=True, scope="module"),
    Entry("botorch-acq", "botorch", "botorch==0.18.1",
          "LogExpectedImprovement and qLogNoisyExpectedImprovement on a SingleTaskGP in a user function",
          _botorch_acq, ["botorch/acquisition", "botorch/models", "botorch/posteriors", "botorch/sampling",
                         "botorch/utils", "gpytorch", "linear_operator", "pyro/distributions"],
          scope="module", also=("gpytorch", "linear_operator", "pyro")),
    Entry("bs-roformer", "bs_roformer", "bs-roformer==1.2.4",
          "BSRoformer (band-split RoPE transformer, hyper-connections), eval forward on a mono clip",
          _bs_roformer, ["bs_roformer"]),
    Entry("mel-roformer-train", "bs_roformer", "bs-roformer==1.2.4",
          "MelBandRoformer, training-mode forward with a target (L1 + multi-resolution STFT loss)",
          _mel_roformer, ["bs_roformer"], grad=True, training=True),
    Entry("prodigy-step", "prodigyopt", "prodigyopt==1.1.2", "Prodigy.step() on two parameters", _prodigy,
          ["prodigyopt"], scope="module"),
    Entry("kbnufft", "torchkbnufft", "torchkbnufft==1.5.2",
          "KbNufft and KbNufftAdjoint (table interpolation) of a complex image in a user function", _kbnufft,
          ["torchkbnufft"], scope="module"),
    Entry("deepxde-pinn", "deepxde", "deepxde==1.15.0",
          "a PINN's training losses (PDE residual via dde.grad.hessian, Dirichlet BC) in a user function",
          _deepxde_pinn, ["deepxde/data", "deepxde/gradients", "deepxde/icbc", "deepxde/nn", "deepxde/model.py",
                          "deepxde/losses.py", "deepxde/utils", "deepxde/geometry"], grad=True, scope="module"),
    Entry("linear-attention-train", "linear_attention_transformer", "linear-attention-transformer==0.19.1",
          "LinearAttentionTransformerLM (reversible, local heads): a training step with a padding mask",
          _linear_attention_train, ["linear_attention_transformer"], grad=True, training=True),
    Entry("pomegranate-infer", "pomegranate", "pomegranate==1.1.2",
          "DenseHMM forward and posteriors, Exponential mixture responsibilities in a user function",
          _pomegranate_infer, ["pomegranate"], scope="module"),
    Entry("pomegranate-hmm-fit", "pomegranate", "pomegranate==1.1.2",
          "a fresh DenseHMM fitted with Baum-Welch (3 iterations) in a user function", _pomegranate_fit,
          ["pomegranate"], scope="module"),
    Entry("opacus-gsm-forward", "opacus", "opacus==1.6.0",
          "GradSampleModule (hooks mode) around a small classifier, training-mode forward", _opacus_forward,
          ["opacus/grad_sample", "opacus/utils", "opacus/layers"], training=True),
    Entry("opacus-dp-step", "opacus", "opacus==1.6.0",
          "DPOptimizer(SGD).step() on per-sample gradients (clip, noise, average)", _opacus_dp_step,
          ["opacus/optimizers", "opacus/grad_sample", "opacus/utils"], scope="module"),
    Entry("pot-sinkhorn", "ot", "pot==0.9.7.post1",
          "ot.dist, ot.sinkhorn and ot.sinkhorn2 (log domain) between two point clouds in a user function",
          _pot_sinkhorn, ["ot/bregman", "ot/backend.py", "ot/utils.py"], scope="module"),
    Entry("pot-sliced", "ot", "pot==0.9.7.post1",
          "sliced and max-sliced Wasserstein distances (seeded projections) in a user function", _pot_sliced,
          ["ot/sliced", "ot/lp", "ot/backend.py", "ot/utils.py"], scope="module"),
    Entry("ema-train-step", "ema_pytorch", "ema-pytorch==0.8.3",
          "a training step (MSE, SGD) followed by EMA.update() and the EMA model's prediction", _ema_step,
          ["ema_pytorch"], grad=True, training=True, scope="module"),
    Entry("auraloss-losses", "auraloss", "auraloss==0.4.0",
          "multi-resolution, mel and sum-and-difference STFT losses, SI-SDR, ESR, DC in a user's audio loss",
          _auraloss, ["auraloss"], scope="module"),
    Entry("pyopt-step", "pytorch_optimizer", "pytorch-optimizer==4.1.0",
          "AdamP, Adan (gradient-norm clipping) and DAdaptAdam .step() on two parameters each", _pyopt_step,
          ["pytorch_optimizer/optimizer", "pytorch_optimizer/base"], scope="module"),
    Entry("pyopt-losses", "pytorch_optimizer", "pytorch-optimizer==4.1.0",
          "Dice, Lovasz hinge, focal Tversky, bi-tempered and LDAM losses in a user's loss function",
          _pyopt_losses, ["pytorch_optimizer/loss"], scope="module"),
    Entry("fast-kmeans-fit", "fast_pytorch_kmeans", "fast-pytorch-kmeans==0.2.2",
          "KMeans fit_predict (given initial centroids) on three blobs in a user function", _fast_kmeans,
          ["fast_pytorch_kmeans"], scope="module"),
    Entry("msssim-loss", "pytorch_msssim", "pytorch-msssim==1.0.0",
          "ms_ssim and the SSIM module (window wider than the crop) in a user's reconstruction loss",
          _msssim_loss, ["pytorch_msssim"], scope="module"),
    Entry("julius-frontend", "julius", "julius==0.2.8",
          "resample_frac, split_bands, high/band-pass filters and fft_conv1d in a user's audio front end",
          _julius_frontend, ["julius"], scope="module"),
    Entry("tcn-forward", "pytorch_tcn", "pytorch-tcn==1.2.3",
          "TCN (weight norm, skip connections, an added conditioning embedding), eval forward", _tcn_forward,
          ["pytorch_tcn"]),
    Entry("tcn-streaming", "pytorch_tcn", "pytorch-tcn==1.2.3",
          "TCN streaming inference (`inference=True`, padding buffers) over three chunks in a user function",
          _tcn_streaming, ["pytorch_tcn"], scope="module"),
    Entry("tab-transformer", "tab_transformer_pytorch", "tab-transformer-pytorch==0.6.1",
          "TabTransformer (a special-token category), eval forward", _tab_transformer, ["tab_transformer_pytorch"]),
    Entry("ft-transformer-train", "tab_transformer_pytorch", "tab-transformer-pytorch==0.6.1",
          "FTTransformer: a training step (BCE, backward, SGD)", _ft_transformer_train, ["tab_transformer_pytorch"],
          grad=True, training=True),
    Entry("torch-ema-step", "torch_ema", "torch-ema==0.3",
          "a training step (MSE, SGD), ExponentialMovingAverage.update() and a prediction under "
          "average_parameters()", _torch_ema_step, ["torch_ema"], grad=True, training=True, scope="module"),
    Entry("local-attn-generate", "local_attention", "local-attention==1.11.2",
          "LocalTransformer (dynamic position bias) greedy generate with a KV cache in a user function",
          _local_attn_generate, ["local_attention"], scope="module"),
    Entry("torchmin-bfgs", "torchmin", "pytorch-minimize==0.1.0",
          "torchmin.minimize with BFGS (strong-Wolfe line search) on Rosenbrock in a user function", _torchmin_bfgs,
          ["torchmin"], scope="module"),
    Entry("torchmin-lbfgs-newton", "torchmin", "pytorch-minimize==0.1.0",
          "L-BFGS then Newton-CG on a ridge logistic regression in a user function", _torchmin_lbfgs_newton,
          ["torchmin"], scope="module"),
    Entry("geoopt-radam-step", "geoopt", "geoopt==0.5.1",
          "a Riemannian training step: backward, RiemannianAdam (Stiefel, Poincare ball) and RiemannianSGD (sphere)",
          _geoopt_radam_step, ["geoopt"], grad=True, training=True, scope="module"),
    Entry("geoopt-hyperbolic", "geoopt", "geoopt==0.5.1",
          "Poincare-ball expmap0, Mobius matvec/add, distances, weighted midpoint, logmap0 in a user head",
          _geoopt_hyperbolic, ["geoopt"], scope="module"),
    Entry("cooper-step", "cooper", "cooper-optim==1.0.1",
          "a constrained training step: SimultaneousOptimizer.roll() with an inequality constraint",
          _cooper_step, ["cooper"], grad=True, training=True, scope="module"),
    Entry("nystromformer", "nystrom_attention", "nystrom-attention==0.0.14",
          "Nystromformer (landmark attention, padding path, mask), eval forward", _nystromformer,
          ["nystrom_attention"]),
    Entry("siren-train", "siren_pytorch", "siren-pytorch==0.1.7",
          "SirenWrapper (SirenNet, latent Modulator) on an 8x8 grid: a training step (MSE, SGD)", _siren_train,
          ["siren_pytorch"], grad=True, training=True),
    Entry("linformer-lm", "linformer", "linformer==0.2.3",
          "LinformerLM (shared key/value projection, a sequence shorter than seq_len), eval forward",
          _linformer_lm, ["linformer"]),
    Entry("linformer-reversible-train", "linformer", "linformer==0.2.3",
          "Linformer with reversible layers and dropout: a training step (MSE, SGD)", _linformer_reversible_train,
          ["linformer"], grad=True, training=True),
    Entry("nsa-train", "native_sparse_attention_pytorch", "native-sparse-attention-pytorch==0.2.3",
          "Transformer with SparseAttention (compress, select, sliding window): a training step (SGD)",
          _nsa_train, ["native_sparse_attention_pytorch"], grad=True, training=True),
    Entry("nsa-sample", "native_sparse_attention_pytorch", "native-sparse-attention-pytorch==0.2.3",
          "Transformer with SparseAttention: greedy sample with the KV cache in a user function", _nsa_sample,
          ["native_sparse_attention_pytorch"], scope="module"),
    Entry("ring-transformer-train", "ring_attention_pytorch", "ring-attention-pytorch==0.5.20",
          "RingTransformer on one process (bucketed flash attention, mask): a training step (SGD)",
          _ring_transformer_train, ["ring_attention_pytorch"], grad=True, training=True),
    # round 15
    Entry("kan-train", "kan", "pykan==0.2.8",
          "KAN fit step: update_grid (least-squares refit), MSE plus regularization, backward, SGD", _kan_train,
          _KAN_FILES, grad=True, training=True),
    Entry("kan-forward", "kan", "pykan==0.2.8", "KAN with multiplication nodes, eval forward", _kan_forward,
          _KAN_FILES),
    Entry("routing-lm", "routing_transformer", "routing-transformer==1.6.1",
          "RoutingTransformerLM (k-means routing, local heads), eval forward", _routing_lm, ["routing_transformer"]),
    Entry("routing-train", "routing_transformer", "routing-transformer==1.6.1",
          "RoutingTransformerLM: a training step (cross entropy plus the k-means loss, SGD)", _routing_train,
          ["routing_transformer"], grad=True, training=True),
    Entry("sinkhorn-generate", "sinkhorn_transformer", "sinkhorn-transformer==0.11.4",
          "AutoregressiveWrapper(SinkhornTransformerLM).generate with an eos token in a user function",
          _sinkhorn_generate, ["sinkhorn_transformer"], scope="module"),
    Entry("sinkhorn-reversible-train", "sinkhorn_transformer", "sinkhorn-transformer==0.11.4",
          "SinkhornTransformerLM (reversible, sortcut, dropout): a training step (SGD)", _sinkhorn_reversible_train,
          ["sinkhorn_transformer"], grad=True, training=True),
    Entry("colt5-block", "colt5_attention", "colt5-attention==0.11.2",
          "ConditionalRoutedTransformerBlock (coordinate-descent routing, mask), eval forward", _colt5_block,
          ["colt5_attention/transformer_block.py", "colt5_attention/coor_descent.py", "colt5_attention/topk.py",
           "colt5_attention/attend.py"]),
    Entry("ncps-ltc-train", "ncps", "ncps==1.0.1",
          "LTC on an AutoNCP wiring: a training step (MSE, SGD, constraint clipping)", _ltc_train,
          ["ncps/torch", "ncps/wirings"], grad=True, training=True),
    Entry("lion-step", "lion_pytorch", "lion-pytorch==0.2.5",
          "Lion (decoupled weight decay) and cautious Lion .step() on two parameters each", _lion_step,
          ["lion_pytorch/lion_pytorch.py", "lion_pytorch/cautious_lion.py"], scope="module"),
    # round 16
    Entry("egnn-network", "egnn_pytorch", "egnn-pytorch==0.2.8",
          "EGNN_Network (sparse-adjacency neighbours, adjacency-degree edges, mask), eval forward", _egnn_network,
          ["egnn_pytorch/egnn_pytorch.py"]),
    Entry("en-transformer-train", "en_transformer", "en-transformer==1.6.6",
          "EnTransformer (nearest plus adjacent neighbours, global linear attention): a training step (SGD)",
          _en_transformer_train, ["en_transformer"], grad=True, training=True),
    Entry("compressive-generate", "compressive_transformer_pytorch", "compressive-transformer-pytorch==0.4.0",
          "AutoregressiveWrapper(CompressiveTransformer).generate with priming and an eos token in a user function",
          _compressive_generate, ["compressive_transformer_pytorch"], scope="module"),
    Entry("compressive-train", "compressive_transformer_pytorch", "compressive-transformer-pytorch==0.4.0",
          "CompressiveTransformer over two segments with memories: a training step (CE plus reconstruction loss)",
          _compressive_train, ["compressive_transformer_pytorch"], grad=True, training=True),
    Entry("torchcrf-tagger", "TorchCRF", "torchcrf==1.1.0",
          "TorchCRF CRF negative log likelihood and Viterbi decode in a user's tagger", _torchcrf_tagger,
          ["TorchCRF"], scope="module"),
    Entry("rmt-mrbp-train", "recurrent_memory_transformer_pytorch", "recurrent-memory-transformer-pytorch==0.7.0",
          "RecurrentMemoryTransformerWrapper with memory-replay backprop (backward inside): a training step",
          _rmt_mrbp_train, ["recurrent_memory_transformer_pytorch"], grad=True, training=True),
    Entry("freia-inn", "FrEIA", "freia==0.2",
          "SequenceINN (AllInOneBlock x2, GLOWCouplingBlock): NLL and the reverse pass in a user function",
          _freia_inn, ["FrEIA/framework/sequence_inn.py", "FrEIA/modules"], scope="module"),
    Entry("freia-iresnet-step", "FrEIA", "freia==0.2",
          "ActNorm and IResNetLayer (Lipschitz correction, autograd.grad log-det): NLL and reverse in a user step",
          _freia_iresnet_step, ["FrEIA/framework/sequence_inn.py", "FrEIA/modules"], grad=True, scope="module"),
    # round 17
    Entry("kmeans-fit", "kmeans_pytorch", "kmeans-pytorch==0.3",
          "kmeans (euclidean, numpy-drawn initial centres, loop to tolerance) and kmeans_predict in a user function",
          _kmeans_fit, ["kmeans_pytorch"], scope="module"),
    Entry("flowtorch-flow", "flowtorch", "flowtorch==0.8",
          "Flow(AffineAutoregressive): log_prob and a seeded rsample in a user function", _flowtorch_flow,
          ["flowtorch/distributions", "flowtorch/bijectors", "flowtorch/parameters", "flowtorch/nn",
           "flowtorch/ops", "flowtorch/lazy.py"], scope="module"),
    Entry("htransformer-generate", "h_transformer_1d", "h-transformer-1d==0.1.9",
          "AutoregressiveWrapper(HTransformer1D, causal).generate with an eos token in a user function",
          _htransformer_generate, ["h_transformer_1d"], scope="module"),
    Entry("htransformer-lm", "h_transformer_1d", "h-transformer-1d==0.1.9",
          "HTransformer1D (non-causal, token shift, padding mask), eval forward", _htransformer_lm, ["h_transformer_1d"]),
    Entry("mega-lm", "mega_pytorch", "mega-pytorch==0.1.0",
          "Mega (multi-headed EMA by FFT convolution, Laplacian attention), eval forward", _mega_lm,
          ["mega_pytorch"]),
    Entry("mlm-train", "mlm_pytorch", "mlm-pytorch==0.1.0",
          "MLM (random top-k masking, random-token replacement) around a user's encoder: a training step (SGD)",
          _mlm_train, ["mlm_pytorch"], grad=True, training=True),
    Entry("charformer-gbst", "charformer_pytorch", "charformer-pytorch==0.0.4",
          "GBST (block scores, consensus attention, downsampling, padding mask), eval forward", _charformer_gbst,
          ["charformer_pytorch"]),
    # round 18
    Entry("soft-moe-train", "soft_moe_pytorch", "soft-moe-pytorch==0.1.9",
          "SoftMoE (noised dispatch, padding mask, experts offloaded when unused) in a user's block: a training step",
          _soft_moe_train, ["soft_moe_pytorch/soft_moe.py"], grad=True, training=True),
    Entry("soft-moe-dynamic", "soft_moe_pytorch", "soft-moe-pytorch==0.1.9",
          "DynamicSlotsSoftMoE (padding to a multiple of the experts, padding mask), eval forward", _soft_moe_dynamic,
          ["soft_moe_pytorch/soft_moe_with_dynamic_slots.py"]),
    Entry("pkm-train", "product_key_memory", "product-key-memory==0.3.0",
          "PKM (masked BatchNorm1d queries, gumbel noise, trainable-memory mask) in a user's model: a training step",
          _pkm_train, ["product_key_memory"], grad=True, training=True),
    Entry("pkm-generate", "product_key_memory", "product-key-memory==0.3.0",
          "Transformer with a PKM layer: generate (top-k, multinomial) in a user function", _pkm_generate,
          ["product_key_memory"], scope="module"),
    Entry("megabyte-generate", "MEGABYTE_pytorch", "MEGABYTE-pytorch==0.3.6",
          "MEGABYTE (two stages).generate after a prompt (top-k, gumbel, tqdm) in a user function", _megabyte_generate,
          ["MEGABYTE_pytorch"], scope="module"),
    Entry("megabyte-train", "MEGABYTE_pytorch", "MEGABYTE-pytorch==0.3.6",
          "MEGABYTE (relative position bias, padded flat input): a training step on its built-in loss",
          _megabyte_train, ["MEGABYTE_pytorch"], grad=True, training=True),
    Entry("moa-forward", "mixture_of_attention", "mixture-of-attention==0.0.25",
          "MixtureOfAttention (coordinate-descent routed queries and key/values, padding mask), eval forward",
          _moa_forward, ["mixture_of_attention", "colt5_attention"], also=("colt5_attention",)),
    Entry("moa-autoregressive-train", "mixture_of_attention", "mixture-of-attention==0.0.25",
          "AutoregressiveWrapper(Transformer of MixtureOfAutoregressiveAttention): a training step",
          _moa_autoregressive_train, ["mixture_of_attention", "colt5_attention", "local_attention"], grad=True,
          training=True, also=("colt5_attention", "local_attention")),
    Entry("mea-flash-train", "memory_efficient_attention_pytorch", "memory-efficient-attention-pytorch==0.1.6",
          "Transformer (FlashAttention autograd Function, reversible layers, chunked feed-forward): a training step",
          _mea_flash_train, ["memory_efficient_attention_pytorch"], grad=True, training=True),
    Entry("mea-chunked-attention", "memory_efficient_attention_pytorch", "memory-efficient-attention-pytorch==0.1.6",
          "Attention (memory-efficient chunked path, key mask, attention bias) in a user function",
          _mea_chunked_attention, ["memory_efficient_attention_pytorch"], scope="module"),
    Entry("specdec-two-models", "speculative_decoding", "speculative-decoding==0.2.0",
          "speculative_decoding (small drafter, large verifier, kv-cache realignment) in a user function",
          _specdec_two_models, ["speculative_decoding/speculative_decoding.py"], scope="module"),
    Entry("specdec-prophet", "speculative_decoding", "speculative-decoding==0.2.0",
          "speculative_decoding_with_prophet_model (a prophet drafting from the main model's embedding) in a user function",
          _specdec_prophet, ["speculative_decoding/speculative_decoding_with_prophet.py"], scope="module"),
    # round 19
    Entry("effnet-eval", "efficientnet_pytorch", "efficientnet-pytorch==0.7.1",
          "EfficientNet-b0 shrunk (dynamic 'same' padding): forward and extract_endpoints in a user function",
          _effnet_eval, ["efficientnet_pytorch"], scope="module"),
    Entry("effnet-train", "efficientnet_pytorch", "efficientnet-pytorch==0.7.1",
          "EfficientNet-b0 shrunk (static 'same' padding, drop connect, memory-efficient swish): a training step",
          _effnet_train, ["efficientnet_pytorch"], grad=True, training=True),
    Entry("snn-leaky-train", "snntorch", "snntorch==1.0.0",
          "two Leaky layers over 8 steps of rate-coded input (surrogate gradients): a ce_rate_loss training step",
          _snn_leaky_train, ["snntorch/_neurons", "snntorch/surrogate.py", "snntorch/spikegen.py",
                             "snntorch/functional/loss.py"], grad=True, training=True, scope="module"),
    Entry("snn-conv-sequential", "snntorch", "snntorch==1.0.0",
          "nn.Sequential conv SNN of init_hidden Leaky layers: utils.reset and 6 time steps in a user function",
          _snn_conv_sequential, ["snntorch/_neurons", "snntorch/surrogate.py", "snntorch/utils.py"],
          scope="module"),
    Entry("esm2-contacts", "esm", "fair-esm==2.0.0",
          "ESM2 (token dropout, padded batch): logits, representations and contacts in a user function",
          _esm2_contacts, ["esm/model/esm2.py", "esm/modules.py", "esm/multihead_attention.py",
                           "esm/rotary_embedding.py"], scope="module"),
    Entry("esm2-mlm-train", "esm", "fair-esm==2.0.0",
          "ESM2 as a masked language model (mask tokens, token dropout): a training step",
          _esm2_mlm_train, ["esm/model/esm2.py", "esm/modules.py", "esm/multihead_attention.py",
                            "esm/rotary_embedding.py"], grad=True, training=True),
    Entry("pfrl-double-dqn-update", "pfrl", "pfrl==0.4.0",
          "DoubleDQN.update on sampled transitions (batching, target, loss records, clipping) in a user function",
          _pfrl_double_dqn_update, ["pfrl/agents/dqn.py", "pfrl/agents/double_dqn.py", "pfrl/replay_buffer.py",
                                    "pfrl/q_functions", "pfrl/action_value.py", "pfrl/utils"],
          grad=True, scope="module"),
    Entry("pfrl-categorical-dqn-update", "pfrl", "pfrl==0.4.0",
          "CategoricalDQN.update (C51 projection, cross entropy) on sampled transitions in a user function",
          _pfrl_categorical_dqn_update, ["pfrl/agents/dqn.py", "pfrl/agents/categorical_dqn.py",
                                         "pfrl/replay_buffer.py", "pfrl/q_functions", "pfrl/action_value.py",
                                         "pfrl/utils"], grad=True, scope="module"),
    Entry("torchlibrosa-specaug-train", "torchlibrosa", "torchlibrosa==0.1.0",
          "Spectrogram, LogmelFilterBank (top_db), SpecAugmentation in a user's tagger: a training step",
          _torchlibrosa_specaug_train, ["torchlibrosa"], grad=True, training=True),
    Entry("torchlibrosa-istft", "torchlibrosa", "torchlibrosa==0.1.0",
          "STFT magnitude and ISTFT resynthesis in a user function", _torchlibrosa_istft, ["torchlibrosa"],
          scope="module"),
    Entry("asteroid-stft-roundtrip", "asteroid_filterbanks", "asteroid-filterbanks==0.4.0",
          "STFT Encoder/Decoder (pinv), mag and Griffin-Lim on (batch, time) waveforms in a user function",
          _asteroid_stft_roundtrip, ["asteroid_filterbanks"], scope="module"),
    Entry("asteroid-sinc-pcen-train", "asteroid_filterbanks", "asteroid-filterbanks==0.4.0",
          "ParamSincFB Encoder, mag, trainable PCEN in a user's classifier: a training step",
          _asteroid_sinc_pcen_train, ["asteroid_filterbanks"], grad=True, training=True),
    # round 20
    Entry("sb3c-tqc-critic-train", "sb3_contrib", "sb3-contrib==2.9.2",
          "TQC critic update (actor's next actions, truncated sorted target quantiles, quantile Huber): a training step",
          _sb3c_tqc_critic_train, _SB3C("tqc"), grad=True, training=True, scope="module", also=("stable_baselines3",)),
    Entry("sb3c-recurrent-ppo-eval", "sb3_contrib", "sb3-contrib==2.9.2",
          "RecurrentActorCriticPolicy: evaluate_actions over sequences with episode starts, forward, in a user function",
          _sb3c_recurrent_ppo_eval, _SB3C("ppo_recurrent"), scope="module", also=("stable_baselines3",)),
    Entry("sb3c-maskable-ppo-loss", "sb3_contrib", "sb3-contrib==2.9.2",
          "MaskableActorCriticPolicy.evaluate_actions with action masks in MaskablePPO's clipped loss: a training step",
          _sb3c_maskable_ppo_loss, _SB3C("ppo_mask"), grad=True, training=True, scope="module",
          also=("stable_baselines3",)),
    Entry("struct-crf-tagger-train", "torch_struct", "torch-struct==0.5",
          "LinearChainCRF over a BiLSTM tagger's potentials with lengths: log_prob of gold tags, a training step",
          _struct_crf_tagger_train, _STRUCT, grad=True, training=True, scope="module"),
    Entry("struct-dependency-parse", "torch_struct", "torch-struct==0.5",
          "DependencyCRF over biaffine arc scores with lengths: partition, marginals, argmax, entropy in a user function",
          _struct_dependency_parse, _STRUCT, grad=True, scope="module"),
    Entry("torch-dct-compress", "torch_dct", "torch-dct==0.1.6",
          "dct_2d/idct_2d (ortho) of 8x8 blocks with high frequencies zeroed, dct_3d/idct_3d, in a user function",
          _torch_dct_compress, ["torch_dct"], scope="module"),
    Entry("torch-dct-linear-train", "torch_dct", "torch-dct==0.1.6",
          "LinearDCT layers (dct, idct) and dct/idct in a user's spectral filter: a training step",
          _torch_dct_linear_train, ["torch_dct"], grad=True, training=True, scope="module"),
    Entry("tltorch-factorized-train", "tltorch", "tensorly-torch==0.5.0",
          "FactorizedLinear (Tucker, factorized forward), TCL and TRL (CP) in a user's model: a training step",
          _tltorch_factorized_train, _TLTORCH, grad=True, training=True, also=("tensorly",)),
    Entry("tltorch-factorized-conv", "tltorch", "tensorly-torch==0.5.0",
          "FactorizedConv (CP, factorized) and FactorizedConv.from_conv (Tucker, reconstructed) in a user function",
          _tltorch_factorized_conv, _TLTORCH, also=("tensorly",)),
    Entry("torch-frame-fttransformer", "torch_frame", "pytorch-frame==0.3.0",
          "FTTransformer over a TensorFrame (categorical and numerical stype encoders), eval, in a user function",
          _torch_frame_fttransformer, ["torch_frame/nn", "torch_frame/data/tensor_frame.py",
                                       "torch_frame/data/multi_tensor.py"]),
    Entry("torch-frame-excelformer-train", "torch_frame", "pytorch-frame==0.3.0",
          "ExcelFormer (hidden mixup of encoded columns) on a TensorFrame: a training step on the mixed-up targets",
          _torch_frame_excelformer_train, ["torch_frame/nn", "torch_frame/data/tensor_frame.py",
                                           "torch_frame/data/multi_tensor.py"], grad=True, training=True),
    # round 21
    Entry("neuralop-tfno-eval", "neuralop", "neuraloperator==2.0.0",
          "TFNO (2-d, Tucker-factorised spectral weights, domain padding), eval forward", _neuralop_tfno_eval,
          _NEURALOP + _TLTORCH, also=("tltorch", "tensorly")),
    Entry("neuralop-fno1d-train", "neuralop", "neuraloperator==2.0.0",
          "FNO (1-d, dense spectral weights) on LpLoss plus H1Loss: a training step", _neuralop_fno1d_train,
          _NEURALOP + _TLTORCH, grad=True, training=True, scope="module", also=("tltorch", "tensorly")),
    Entry("torchani-energies-forces", "torchani", "torchani==2.9.0",
          "simple_ani (all-pairs neighbours, xTB repulsion): grad.energies_and_forces of a padded batch in a user function",
          _torchani_energies_forces, _TORCHANI, grad=True, scope="module"),
    Entry("torchani-ensemble-train", "torchani", "torchani==2.9.0",
          "simple_ani ensemble of 2 (cosine cutoff): energies of a padded batch, scaled MSE, a training step",
          _torchani_ensemble_train, _TORCHANI, grad=True, training=True),
    Entry("pykeen-gnn-score", "pykeen", "pykeen==1.11.1",
          "RGCN and CompGCN: score_hrt, score_t and predict_t over all tails, eval, in a user function",
          _pykeen_gnn_score, _PYKEEN, scope="module"),
    Entry("pykeen-transe-slcwa-train", "pykeen", "pykeen==1.11.1",
          "TransE sLCWA step: BasicNegativeSampler, margin ranking loss, backward, SGD, post_parameter_update",
          _pykeen_transe_slcwa_train, _PYKEEN, grad=True, training=True, scope="module"),
    Entry("rechub-din-eval", "torch_rechub", "torch-rechub==0.9.0",
          "DIN (target attention over a padded item history, Dice MLPs), eval, in a user function", _rechub_din_eval,
          _RECHUB),
    Entry("rechub-dien-train", "torch_rechub", "torch-rechub==0.9.0",
          "DIEN (packed GRU interest extractor, auxiliary loss, AUGRU) with an empty history: a training step",
          _rechub_dien_train, _RECHUB, grad=True, training=True),
    Entry("e2cnn-c8-eval", "e2cnn", "e2cnn==0.2.3",
          "C8-steerable CNN (R2Conv, InnerBatchNorm, max pool, GroupPooling) on a GeometricTensor, eval",
          _e2cnn_c8_eval, _E2CNN),
    Entry("e2cnn-c4-train", "e2cnn", "e2cnn==0.2.3",
          "C4-steerable CNN in training mode (basis expansion, batch norm, dropout, antialiased pool): a training step",
          _e2cnn_c4_train, _E2CNN, grad=True, training=True),
    # round 22
    Entry("skorch-classifier-train-step", "skorch", "skorch==1.4.0",
          "NeuralNetClassifier (NLLLoss on probabilities, GradientNormClipping): net.train_step on a batch",
          _skorch_classifier_train_step, _SKORCH, grad=True, training=True, scope="module"),
    Entry("skorch-binary-validation", "skorch", "skorch==1.4.0",
          "NeuralNetBinaryClassifier with dict inputs: validation_step, evaluation_step, thresholded labels",
          _skorch_binary_validation, _SKORCH, scope="module"),
    Entry("ignite-supervised-step", "ignite", "pytorch-ignite==0.5.5",
          "supervised_training_step (gradient accumulation 2, loss.item() output) on an Engine, iterations 1 and 2",
          _ignite_supervised_step, _IGNITE, grad=True, training=True, scope="module"),
    Entry("ignite-metrics", "ignite", "pytorch-ignite==0.5.5",
          "Accuracy, Precision, Recall, Fbeta, top-k, ConfusionMatrix with IoU/mIoU, Loss, MSE: reset, update, compute",
          _ignite_metrics, _IGNITE, scope="module"),
    Entry("roma-rotations", "roma", "roma==1.8.0",
          "rotvec/rotmat/unitquat/Euler conversions, special Procrustes, Gram-Schmidt, slerp, RigidUnitQuat in a user function",
          _roma_rotations, _ROMA, scope="module"),
    Entry("roma-pose-train", "roma", "roma==1.8.0",
          "a pose MLP through special_procrustes, geodesic distance and Rigid.apply: a training step",
          _roma_pose_train, _ROMA, grad=True, training=True, scope="module"),
    Entry("schedulefree-adamw-train", "schedulefree", "schedulefree==1.4.1",
          "AdamWScheduleFree (warmup): optimizer.train(), three training steps, optimizer.eval() and a prediction",
          _schedulefree_adamw_train, _SCHEDULEFREE, grad=True, training=True, scope="module"),
    Entry("schedulefree-wrapper-sgd", "schedulefree", "schedulefree==1.4.1",
          "ScheduleFreeWrapper(SGD) and SGDScheduleFree: train(), two steps each, eval() and a prediction",
          _schedulefree_wrapper_sgd, _SCHEDULEFREE, grad=True, training=True, scope="module"),
    Entry("th-sht-disco", "torch_harmonics", "torch-harmonics==0.8.0",
          "RealSHT/InverseRealSHT low-pass, DISCO convolution and its transpose, ResampleS2, in a user function",
          _th_sht_disco, _TH, scope="module"),
    Entry("th-sfno-train", "torch_harmonics", "torch-harmonics==0.8.0",
          "the example SphericalFourierNeuralOperator on L2LossS2: a training step",
          _th_sfno_train, _TH, grad=True, training=True),
    # round 23
    Entry("flow-matching-cfm-train-sample", "flow_matching", "flow-matching==1.0.10",
          "AffineProbPath (CondOT) training step, ODESolver.sample (midpoint) and compute_likelihood (Hutchinson)",
          _fm_cfm_train_sample, _FM, grad=True, training=True, scope="module", also=("torchdiffeq",)),
    Entry("flow-matching-discrete-train-sample", "flow_matching", "flow-matching==1.0.10",
          "MixtureDiscreteProbPath with generalized KL: a training step, then MixtureDiscreteEulerSolver.sample",
          _fm_discrete_train_sample, _FM, grad=True, training=True, scope="module", also=("torchdiffeq",)),
    Entry("ptwt-denoise", "ptwt", "ptwt==1.0.1",
          "wavedec/waverec soft thresholding, wavedec2/waverec2, swt/iswt, WaveletPacket, in a user function",
          _ptwt_denoise, _PTWT, scope="module"),
    Entry("ptwt-learnable-wavelet-train", "ptwt", "ptwt==1.0.1",
          "SoftOrthogonalWavelet through wavedec/waverec with gated details, plus wavelet_loss: a training step",
          _ptwt_learnable_wavelet_train, _PTWT, grad=True, training=True, scope="module"),
    Entry("torch-pruning-group-reg-train", "torch_pruning", "torch-pruning==1.6.1",
          "GroupNormPruner on a user's CNN: a training step with pruner.regularize between backward and step",
          _tp_group_reg_train, _TP, grad=True, training=True, scope="module"),
    Entry("torch-pruning-importance", "torch_pruning", "torch-pruning==1.6.1",
          "group magnitude (L2, L1), LAMP, BN scale and FPGM importances of a dependency graph's groups",
          _tp_importance, _TP, scope="module"),
    Entry("torchsurv-cox-weibull-train", "torchsurv", "torchsurv==0.2.0",
          "Cox partial likelihood (Efron and Breslow ties) plus Weibull AFT likelihood: a training step",
          _torchsurv_cox_weibull_train, _TORCHSURV, grad=True, training=True, scope="module"),
    Entry("torchsurv-metrics", "torchsurv", "torchsurv==0.2.0",
          "IPCW, concordance index, time-dependent AUC, Brier score and their integrals, Kaplan-Meier predict",
          _torchsurv_metrics, _TORCHSURV, scope="module"),
    Entry("captum-gradient-attr", "captum", "captum==0.9.0",
          "IntegratedGradients (with delta), Saliency, InputXGradient and NoiseTunnel(SmoothGrad) of a user's CNN",
          _captum_gradient_attr, _CAPTUM, grad=True, scope="module"),
    Entry("captum-perturbation-attr", "captum", "captum==0.9.0",
          "FeatureAblation, Occlusion, ShapleyValueSampling and LayerGradCam (interpolated) of a user's CNN",
          _captum_perturbation_attr, _CAPTUM, grad=True, scope="module"),
    # round 24
    Entry("galore-adamw-train", "galore_torch", "galore-torch==1.0",
          "GaLoreAdamW ('std' and 'right' projections, new projector every 2 steps, weight decay): 3 training steps",
          _galore_adamw_train, _GALORE, grad=True, training=True, scope="module"),
    Entry("galore-adafactor-train", "galore_torch", "galore-torch==1.0",
          "GaLoreAdafactor (relative step, warmup init, beta1; 'reverse_std', 'full' projections): 3 training steps",
          _galore_adafactor_train, _GALORE, grad=True, training=True, scope="module"),
    Entry("madgrad-train", "madgrad", "madgrad==1.3",
          "MADGRAD (momentum, decoupled weight decay): three training steps in a user function",
          _madgrad_train, _MADGRAD, grad=True, training=True, scope="module"),
    Entry("madgrad-mirror-eps0", "madgrad", "madgrad==1.3",
          "MirrorMADGRAD and MADGRAD without momentum, eps 0 (zero moments to inf), weight decay: two steps each",
          _madgrad_mirror_eps0, _MADGRAD, grad=True, training=True, scope="module"),
    Entry("rotary-xpos-cached", "rotary_embedding_torch", "rotary-embedding-torch==0.9.1",
          "xpos rotate_queries_and_keys and rotate_queries_with_cached_keys, an NTK-rescaled rotary, in a user function",
          _rotary_xpos_cached, _ROTARY, scope="module"),
    Entry("rotary-axial-train", "rotary_embedding_torch", "rotary-embedding-torch==0.9.1",
          "pixel get_axial_freqs with offsets, learned-frequency rotary, apply_learned_rotations: a training step",
          _rotary_axial_train, _ROTARY, grad=True, training=True, scope="module"),
    Entry("torch-kmeans-fit-predict", "torch_kmeans", "torch-kmeans==0.2.0",
          "KMeans (k-means++, 2 inits, unit normalisation, per-instance k): forward, fit, predict in a user function",
          _torch_kmeans_fit_predict, _TORCH_KMEANS, scope="module"),
    Entry("torch-kmeans-soft-train", "torch_kmeans", "torch-kmeans==0.2.0",
          "SoftKMeans (cosine, 2 random inits, differentiable last step) on a user's encoder: a training step",
          _torch_kmeans_soft_train, _TORCH_KMEANS, grad=True, training=True, scope="module"),
    Entry("torchbnn-mlp-train", "torchbnn", "torchbnn==1.2",
          "BayesLinear MLP (reparameterised weights), cross entropy plus 0.01 BKLLoss: a training step",
          _torchbnn_mlp_train, _TORCHBNN, grad=True, training=True),
    Entry("torchbnn-cnn-frozen", "torchbnn", "torchbnn==1.2",
          "BayesConv2d, BayesBatchNorm2d (momentum None), BayesLinear: train forward, KL, freeze, eval, unfreeze",
          _torchbnn_cnn_frozen, _TORCHBNN, scope="module"),
    # round 25
    Entry("dadapt-adam-train", "dadaptation", "dadaptation==3.2",
          "DAdaptAdam (decoupled weight decay, bias correction, growth rate 1.02): three training steps",
          _dadapt_adam_train, _DADAPT, grad=True, training=True, scope="module"),
    Entry("dadapt-sgd-adagrad-lion", "dadaptation", "dadaptation==3.2",
          "DAdaptSGD (momentum), DAdaptAdaGrad (momentum), DAdaptLion, weight decay: two training steps each",
          _dadapt_sgd_adagrad_lion, _DADAPT, grad=True, training=True, scope="module"),
    Entry("came-mlp-train", "came_pytorch", "came-pytorch==0.1.3",
          "CAME (factored and unfactored moments, confidence-guided residual, weight decay): three training steps",
          _came_mlp_train, _CAME, grad=True, training=True, scope="module"),
    Entry("came-cnn-train", "came_pytorch", "came-pytorch==0.1.3",
          "CAME on a CNN (4-d conv weights factored, clip 0.5, a frozen conv without gradients): two training steps",
          _came_cnn_train, _CAME, grad=True, training=True, scope="module"),
    Entry("ranger-train", "pytorch_ranger", "pytorch-ranger==0.1.1",
          "Ranger (RAdam rectification past the N_sma threshold, lookahead every 2 steps): six training steps",
          _ranger_train, _RANGER, grad=True, training=True, scope="module"),
    Entry("ranger-va-qh", "pytorch_ranger", "pytorch-ranger==0.1.1",
          "RangerVA (amsgrad, softplus) and RangerQH (quasi-hyperbolic, decoupled decay): three steps each",
          _ranger_va_qh, _RANGER, grad=True, training=True, scope="module"),
    Entry("hyper-connections-train", "hyper_connections", "hyper-connections==0.4.11",
          "HyperConnections (4 streams, stream embeddings, frac-connections via decorate_branch): a training step",
          _hc_transformer_train, _HC, grad=True, training=True),
    Entry("mhc-eval", "hyper_connections", "hyper-connections==0.4.11",
          "mHC (Sinkhorn, log-domain, 2 alpha proposals, tuple branch), channel-first HyperConnections, eval",
          _mhc_eval, _HC, scope="module"),
    Entry("tensordict-policy-eval", "tensordict", "tensordict==0.15.3",
          "TensorDictSequential policy (Normal, deterministic), select/exclude/apply, mask, split, stack, update, eval",
          _tensordict_policy_eval, _TENSORDICT, scope="module"),
    Entry("tensordict-train", "tensordict", "tensordict==0.15.3",
          "TensorDictModule critic and actor on a TensorDict batch, masked rows, from_module norm: a training step",
          _tensordict_train, _TENSORDICT, grad=True, training=True, scope="module"),
    # round 26
    Entry("torch-pca-mle-score", "torch_pca", "torch-pca==1.1.0",
          "PCA(n_components='mle', full SVD): fit_transform, inverse_transform, score, in a user function",
          _torch_pca_mle_score, _TORCH_PCA, scope="module"),
    Entry("torch-pca-eigh-randomized", "torch_pca", "torch-pca==1.1.0",
          "PCA covariance_eigh (90% variance, whiten): fit, transform, get_covariance; randomized (LU) get_precision",
          _torch_pca_eigh_randomized, _TORCH_PCA, scope="module"),
    Entry("heavyball-soap-adamw-train", "heavyball", "heavyball==3.2.1",
          "SOAP (preconditioner every 2 steps) and AdamW (warmup, caution, weight decay): three training steps each",
          _heavyball_soap_adamw_train, _HEAVYBALL, grad=True, training=True, scope="module"),
    Entry("heavyball-psgd-muon-train", "heavyball", "heavyball==3.2.1",
          "PSGDKron (Kronecker preconditioner, probabilistic updates) and Muon: three training steps each",
          _heavyball_psgd_muon_train, _HEAVYBALL, grad=True, training=True, scope="module"),
    Entry("torchjd-aggregators", "torchjd", "torchjd==0.18.0",
          "PCGrad, MGDA, IMTL-G, Aligned-MTL, GradVac, GradDrop, ConFIG, TrimmedMean, PCD, Krum on Jacobians",
          _torchjd_aggregators, _TORCHJD, scope="module"),
    Entry("torchjd-scalarization-train", "torchjd", "torchjd==0.18.0",
          "GeometricMean, UW, IMTL-L and STCH scalarizing two task losses: a training step each",
          _torchjd_scalarization_train, _TORCHJD, grad=True, training=True, scope="module"),
    Entry("torchbayesian-bnn-train", "torchbayesian", "torchbayesian==0.2.1",
          "BayesianModule (Gaussian posteriors, Gaussian prior) MLP, cross entropy plus mean KL: a training step",
          _torchbayesian_bnn_train, _TORCHBAYESIAN, grad=True, training=True, scope="module"),
    Entry("torchbayesian-mc-predict", "torchbayesian", "torchbayesian==0.2.1",
          "BayesianDropout, pretrained-posterior BayesianModule, enable_mc_dropout: 4 MC samples each, MC-approx KL",
          _torchbayesian_mc_predict, _TORCHBAYESIAN, scope="module"),
    Entry("torch-cgd-acgd-gan-train", "torch_cgd", "torch-cgd==0.0.2",
          "ACGD (GMRES on Hessian-vector products) on a tiny GAN's zero-sum game: two steps",
          _torch_cgd_acgd_gan_train, _TORCH_CGD, grad=True, training=True, scope="module"),
    Entry("torch-cgd-games", "torch_cgd", "torch-cgd==0.0.2",
          "CGD (explicit mixed Hessians, torch.linalg) general-sum, CGD_CG zero-sum, ACGD with CG: one step each",
          _torch_cgd_games, _TORCH_CGD, grad=True, training=True, scope="module"),
    # round 27
    Entry("torch-kf-filter-smooth", "torch_kf", "torch-kf==0.4.3",
          "constant-velocity KalmanFilter.filter over tracks with NaN measures (return_all), then rts_smooth",
          _torch_kf_filter_smooth, _TORCH_KF, scope="module"),
    Entry("torch-kf-association", "torch_kf", "torch-kf==0.4.3",
          "constant-acceleration Joseph-form KF: predict, project, Mahalanobis gating, update, steady-state covariance",
          _torch_kf_association, _TORCH_KF, scope="module"),
    Entry("torchrbf-global-grad", "torchrbf", "torchrbf==1.0.0",
          "RBFInterpolator thin-plate spline (degree 1, smoothing) and Gaussian: build, evaluate, grad of the queries",
          _torchrbf_global_grad, _TORCHRBF, grad=True, scope="module"),
    Entry("torchrbf-neighbors", "torchrbf", "torchrbf==1.0.0",
          "RBFInterpolator with 6 neighbours (scipy KD tree, multiquadric; torch_dense, quintic): batched local solves",
          _torchrbf_neighbors, _TORCHRBF, scope="module"),
    Entry("torchdr-affinities", "torchdr", "torchdr==0.5",
          "EntropicAffinity (binary search), Sinkhorn, UMAP, SelfTuning, NormalizedGaussian affinities of 30 points",
          _torchdr_affinities, _TORCHDR, scope="module"),
    Entry("torchdr-tsne-umap-eval", "torchdr", "torchdr==0.5",
          "TSNE and UMAP fit_transform (torch backend, 20 and 10 iterations), silhouette, kNN accuracy, neighbourhoods",
          _torchdr_tsne_umap_eval, _TORCHDR, grad=True, scope="module"),
    Entry("optimi-adan-ranger-train", "optimi", "torch-optimi==0.3.3",
          "optimi Adan (weight decay) and Ranger (lookahead every 2 steps): three training steps each",
          _optimi_adan_ranger_train, _OPTIMI, grad=True, training=True, scope="module"),
    Entry("optimi-stableadamw-bf16", "optimi", "torch-optimi==0.3.3",
          "optimi StableAdamW on bfloat16 (Kahan summation, foreach), RAdam (decouple_lr), Lion: two steps each",
          _optimi_stableadamw_bf16, _OPTIMI, grad=True, training=True, scope="module"),
    Entry("lm-regression-train", "torch_levenberg_marquardt", "torch-levenberg-marquardt==1.2.3",
          "LevenbergMarquardtModule (vmap jacrev Jacobian, QR, standard damping, 10 attempts): three training steps",
          _lm_regression_train, _TLM, grad=True, training=True, scope="module"),
    Entry("lm-classifier-sliced-train", "torch_levenberg_marquardt", "torch-levenberg-marquardt==1.2.3",
          "LM on cross entropy (random parameter subset, sliced J J', Cholesky) and sliced MSE (solve): two steps each",
          _lm_classifier_sliced_train, _TLM, grad=True, training=True, scope="module"),
    # round 28
    Entry("wavelets-dwt-denoise", "pytorch_wavelets", "pytorch-wavelets==1.3.0",
          "DWTForward/DWTInverse (2 levels, db3, zero) with soft-thresholded details; DWT1D (3 levels, db2) roundtrip",
          _pytorch_wavelets_dwt_roundtrip, _PYWAVELETS, scope="module"),
    Entry("wavelets-dtcwt-scat-train", "pytorch_wavelets", "pytorch-wavelets==1.3.0",
          "DTCWTForward/Inverse (J=2) reconstruction loss and ScatLayer features into a classifier: a training step",
          _pytorch_wavelets_dtcwt_scat_train, _PYWAVELETS, grad=True, training=True, scope="module"),
    Entry("tntorch-tt-decompose", "tntorch", "tntorch==1.1.2",
          "TT-SVD (ranks 3), relative error, norm, dot, round_tt of a sum, element and slice reads",
          _tntorch_tt_decompose, _TNTORCH, scope="module"),
    Entry("tntorch-tucker-cp", "tntorch", "tntorch==1.1.2",
          "Tucker (HOSVD) and CP (ALS) of a 5x6x7 tensor: errors, product, mean, sum over a dim, dist",
          _tntorch_tucker_cp_metrics, _TNTORCH, scope="module"),
    Entry("interpol-spline-pull", "interpol", "torch-interpol==0.3.0",
          "cubic spline_coeff_nd, grid_pull at scattered points, grid_grad, identity_grid warp (linear, zero bound)",
          _interpol_spline_pull, _INTERPOL, scope="module"),
    Entry("interpol-register-train", "interpol", "torch-interpol==0.3.0",
          "learnable displacement, cubic grid_pull, MSE and smoothness, Adam step; grid_push, grid_count, resize",
          _interpol_register_train, _INTERPOL, grad=True, training=True, scope="module"),
    Entry("torchnmf-nmf-fit", "torchnmf", "torchnmf==0.3.5",
          "NMF rank 4 fit by multiplicative updates: beta 2 and beta 1 with L1/L2 regularization, 6 iterations each",
          _torchnmf_nmf_fit, _TORCHNMF, grad=True, training=True, scope="module"),
    Entry("torchnmf-nmfd-plca-fit", "torchnmf", "torchnmf==0.3.5",
          "NMFD (rank 3, 4-frame templates, beta 1) fit and PLCA (rank 4, EM) fit",
          _torchnmf_nmfd_plca_fit, _TORCHNMF, grad=True, training=True, scope="module"),
    Entry("linode-magnus", "torch_linode", "torch-linode==0.3.0",
          "odeint adaptive Magnus order 4, order 6 non-homogeneous, order 2 dense output evaluated at 3 times",
          _linode_magnus, _LINODE, scope="module"),
    Entry("linode-adjoint-train", "torch_linode", "torch-linode==0.3.0",
          "odeint_adjoint (Magnus 4, Gauss-Kronrod quadrature) of a learnable A(t) module: a training step",
          _linode_adjoint_train, _LINODE, grad=True, training=True, scope="module"),
    # round 29
    Entry("xitorch-root-ivp-interp", "xitorch", "xitorch==0.5.1",
          "rootfinder (Broyden), minimize (gd), solve_ivp RK4 and RK45, cspline and linear Interp1D, symeig and solve",
          _xitorch_root_ivp_interp, _XITORCH, scope="module"),
    Entry("xitorch-implicit-train", "xitorch", "xitorch==0.5.1",
          "equilibrium (implicit gradient) and solve_ivp RK4 (adjoint) of a learnable W, U: a training step",
          _xitorch_implicit_train, _XITORCH, grad=True, training=True, scope="module"),
    Entry("torchpme-calculators", "torchpme", "torch-pme==0.5.0",
          "Ewald, PME and P3M Coulomb potentials and an inverse-power-law Ewald of 8 charges in a 4 A cell",
          _torchpme_calculators, _TORCHPME, scope="module"),
    Entry("torchpme-forces-train", "torchpme", "torch-pme==0.5.0",
          "PME of a learnable Coulomb + 1/r^2 CombinedPotential, forces by autograd.grad, energy and force MSE: a step",
          _torchpme_forces_train, _TORCHPME, grad=True, training=True, scope="module"),
    Entry("pycox-losses-train", "pycox", "pycox==0.3.0",
          "MLP under LogisticHazard, PMF, MTLR, DeepHitSingle and CoxPH losses: a training step",
          _pycox_losses_train, _PYCOX, grad=True, training=True, scope="module"),
    Entry("pycox-cr-coxtime-train", "pycox", "pycox==0.3.0",
          "CoxTime net under CoxCCLoss, DeepHit competing risks, PC-hazard and BCE-surv losses: a training step",
          _pycox_cr_coxtime_train, _PYCOX, grad=True, training=True, scope="module"),
    Entry("torchhd-vsa-ops", "torchhd", "torch-hd==5.8.4",
          "MAP, FHRR and BSC records: random, bind, multiset, hash_table, inverse, similarities, permute, quantize",
          _torchhd_vsa_ops, _TORCHHD, scope="module"),
    Entry("torchhd-centroid-train", "torchhd", "torch-hd==5.8.4",
          "Sinusoid and Level embeddings bound, Centroid add, add_online, normalize, dot predictions",
          _torchhd_centroid_train, _TORCHHD, scope="module"),
    Entry("pk-fk-jacobian", "pytorch_kinematics", "pytorch-kinematics==0.10.0",
          "a 4-joint URDF chain: batched forward_kinematics of all links, quaternion, points, inverse, jacobian, clamp",
          _pk_fk_jacobian, _PK, scope="module"),
    Entry("pk-ik-solve", "pytorch_kinematics", "pytorch-kinematics==0.10.0",
          "PseudoInverseIK (3 retries, 6 iterations, joint limits) toward 2 goal poses; Transform3d composition",
          _pk_ik_solve, _PK, scope="module"),
    # round 30
    Entry("torchimize-single-fit", "torchimize", "torchimize==0.0.16",
          "a damped cosine fit by lsq_lma (Levenberg, Marquardt, analytic Jacobian), lsq_gna, gradient_descent",
          _torchimize_single_fit, _TORCHIMIZE, grad=True, scope="module"),
    Entry("torchimize-parallel-fit", "torchimize", "torchimize==0.0.16",
          "4 damped cosines fit at once by lsq_lma_parallel (Levenberg, Marquardt), lsq_gna_parallel, gradient descent",
          _torchimize_parallel_fit, _TORCHIMIZE, scope="module"),
    Entry("torchlie-group-ops", "torchlie", "torchlie==0.1.0",
          "SO3 and SE3 exp, log, adj, inv, compose, transform, hat/vee, left_act; a log-exp round trip with checks",
          _torchlie_group_ops, _TORCHLIE, scope="module"),
    Entry("torchlie-pose-train", "torchlie", "torchlie==0.1.0",
          "learnable SE3 tangents: transformed points, relative-pose and rotation logs, Adam: a training step",
          _torchlie_pose_train, _TORCHLIE, grad=True, training=True, scope="module"),
    Entry("posteriors-sgmcmc-train", "posteriors", "posteriors==0.1.3",
          "SGHMC, SGLD, BAOA and SGNHT steps on an MLP posterior; cg on a Hessian-vector system; L_from_flat",
          _posteriors_sgmcmc_train, _POSTERIORS, grad=True, training=True, scope="module"),
    Entry("posteriors-laplace-ekf", "posteriors", "posteriors==0.1.3",
          "diagonal and dense Fisher and dense GGN Laplace, diagonal and dense Fisher EKF updates, samples",
          _posteriors_laplace_ekf, _POSTERIORS, grad=True, scope="module"),
    Entry("cherry-pg-train", "cherry", "cherry-rl==0.2.0",
          "discount, GAE, normalize, TD; PPO and A2C losses, Adam; TRPO Hessian-vector product and CG: a step",
          _cherry_pg_train, _CHERRY, grad=True, training=True, scope="module"),
    Entry("cherry-sac-update", "cherry", "cherry-rl==0.2.0",
          "SAC.update from a 12-transition ExperienceReplay: entropy, twin Q, TanhNormal policy and target updates",
          _cherry_sac_update, _CHERRY, grad=True, training=True, scope="module"),
    Entry("higher-maml-train", "higher", "higher==0.2.1",
          "innerloop_ctx with SGD momentum: 3 differentiable inner steps, query loss backward, Adam meta step",
          _higher_maml_train, _HIGHER, grad=True, training=True, scope="module"),
    Entry("higher-hypergrad", "higher", "higher==0.2.1",
          "DifferentiableAdam (amsgrad) with a learnable lr, Adadelta, Adamax, ASGD, Rprop: 2 steps each, hypergradient",
          _higher_hypergrad, _HIGHER, grad=True, scope="module"),
    # round 31
    Entry("pyhessian-eigen-trace", "pyhessian", "pyhessian==0.1",
          "MLP under cross entropy, one batch: top-2 Hessian eigenvalues by power iteration, Hutchinson trace",
          _pyhessian_eigen_trace, _PYHESSIAN, grad=True, scope="module"),
    Entry("pyhessian-dataloader", "pyhessian", "pyhessian==0.1",
          "MLP over a 2-batch loader: top eigenvalue and trace through dataloader_hv_product, group_product",
          _pyhessian_dataloader, _PYHESSIAN, grad=True, scope="module"),
    Entry("geotorch-constrained-train", "geotorch", "geotorch==0.4.0",
          "9 constrained linears (SO, low rank, PD, sphere, almost orthogonal, GL+, SL, Grassmannian, skew): SGD step, in_manifold",
          _geotorch_constrained_train, _GEOTORCH, grad=True, training=True, scope="module"),
    Entry("geotorch-assign-sample", "geotorch", "geotorch==0.4.0",
          "rotation, skew and unit rows assigned through right_inverse; sample() of 7 manifolds; uniform_init_, torus_init_",
          _geotorch_assign_sample, _GEOTORCH, scope="module"),
    Entry("tsgu-iterative-solvers", "torchsparsegradutils", "torchsparsegradutils==0.2.7",
          "linear_cg (with Lanczos tridiagonalisation) and minres of an SPD 8x8, bicgstab and lsmr of a nonsymmetric one",
          _tsgu_iterative_solvers, _TSGU, scope="module"),
    Entry("tsgu-sparse-solve-train", "torchsparsegradutils", "torchsparsegradutils==0.2.7",
          "learnable tridiagonal COO: sparse_generic_solve (linear_cg, minres), sparse_mm, Adam: a training step",
          _tsgu_sparse_solve_train, _TSGU, grad=True, training=True, scope="module"),
    Entry("torcheval-functional", "torcheval", "torcheval==0.0.7",
          "15 functional metrics: AUROC, AUPRC, binned AUROC, normalized entropy, accuracy, F1, precision, recall, R2, ranking",
          _torcheval_functional, _TORCHEVAL, scope="module"),
    Entry("torcheval-metric-classes", "torcheval", "torcheval==0.0.7",
          "reset, 2 updates, compute of MulticlassAccuracy, F1, BinaryAUROC, PR curve, MSE, R2, Mean, Sum",
          _torcheval_metric_classes, _TORCHEVAL, scope="module"),
    Entry("pythae-hamiltonian-train", "pythae", "pythae==0.1.2",
          "RHVAE (learned metric) and HVAE, 2 leapfrog steps each, default MLPs on 8x8 images: losses, Adam: a training step",
          _pythae_hamiltonian_train, _PYTHAE, grad=True, training=True, scope="module"),
    Entry("pythae-vamp-svae-loss", "pythae", "pythae==0.1.2",
          "VAMP (3 pseudo-inputs) and SVAE (von Mises-Fisher posterior) losses, reconstructions and codes",
          _pythae_vamp_svae_loss, _PYTHAE, training=True, scope="module"),    # round 32
    Entry("torchstain-macenko", "torchstain", "torchstain==1.4.1",
          "Macenko fit to a 16x16 H&E tile, normalize with H and E stains; Macenko augmentor fit and augment",
          _torchstain_macenko, _TORCHSTAIN, scope="module"),
    Entry("torchstain-reinhard-multi", "torchstain", "torchstain==1.4.1",
          "Reinhard (plain, modified) fit and normalize through LAB; multi-target Macenko (avg-post) of 2 targets",
          _torchstain_reinhard_multi, _TORCHSTAIN, scope="module"),
    Entry("lampe-npe-nre-train", "lampe", "lampe==0.9.0",
          "NPE (MAF), NRE and BNRE losses, one Adam step each through GDStep (finite test, clipping): a training step",
          _lampe_npe_nre_train, _LAMPE, grad=True, training=True, scope="module"),
    Entry("lampe-mcmc-amnre", "lampe", "lampe==0.9.0",
          "AMNRE loss with a Bernoulli mask, a marginal log-ratio; Metropolis-Hastings on an NRE; gridapply",
          _lampe_mcmc_amnre, _LAMPE, scope="module"),
    Entry("lr-finder-range-test", "torch_lr_finder", "torch-lr-finder==0.2.2",
          "LRFinder range test, SGD, 6 exponential steps over a DataLoader, smoothing, divergence test; reset",
          _lr_finder_range_test, _LR_FINDER, grad=True, training=True, scope="module"),
    Entry("lr-finder-val-accum", "torch_lr_finder", "torch-lr-finder==0.2.2",
          "LRFinder range test, Adam, 4 linear steps with a validation loader and 2-step accumulation; reset",
          _lr_finder_val_accum, _LR_FINDER, grad=True, training=True, scope="module"),
    Entry("poutyne-batches", "poutyne", "poutyne==1.19.0",
          "Model (sgd, cross_entropy, accuracy and F1): train_on_batch, evaluate_on_batch, predict_on_batch",
          _poutyne_batches, _POUTYNE, grad=True, training=True, scope="module"),
    Entry("poutyne-fit-evaluate", "poutyne", "poutyne==1.19.0",
          "Model.fit on tensors, 2 epochs with validation, EarlyStopping, ReduceLROnPlateau; evaluate",
          _poutyne_fit_evaluate, _POUTYNE, grad=True, training=True, scope="module"),
    # round 33
    Entry("deepctr-deepfm-fit", "deepctr_torch", "deepctr-torch==0.3.0",
          "DeepFM (2 sparse fields, 1 dense): fit 1 epoch on a numpy dict with a validation split; predict",
          _deepctr_deepfm_fit, _DEEPCTR, grad=True, training=True, scope="module"),
    Entry("deepctr-dcn-earlystop", "deepctr_torch", "deepctr-torch==0.3.0",
          "DCN (vector cross network, L2): fit 3 epochs with validation data and EarlyStopping; predict",
          _deepctr_dcn_earlystop, _DEEPCTR, grad=True, training=True, scope="module"),
    Entry("warmup-linear-cosine", "pytorch_warmup", "pytorch-warmup==0.2.0",
          "AdamW, CosineAnnealingLR under a LinearWarmup of 3: 6 steps with warmup.dampening(); state_dict",
          _warmup_linear_cosine, _WARMUP, grad=True, training=True, scope="module"),
    Entry("warmup-untuned-radam", "pytorch_warmup", "pytorch-warmup==0.2.0",
          "Adam with ExponentialLR under UntunedExponentialWarmup and RAdamWarmup: 5 steps each",
          _warmup_untuned_radam, _WARMUP, grad=True, training=True, scope="module"),
    Entry("accel-train-eval", "pytorch_accelerated", "pytorch-accelerated==0.1.61",
          "Trainer (SGD, cross entropy, default callbacks): train 2 epochs with an eval set; evaluate",
          _accel_train_eval, _ACCEL, grad=True, training=True, scope="module"),
    Entry("accel-cosine-accum", "pytorch_accelerated", "pytorch-accelerated==0.1.61",
          "Trainer with CosineLrScheduler (1 warmup epoch), 2-step accumulation, clipping, early stopping",
          _accel_cosine_accum, _ACCEL, grad=True, training=True, scope="module"),
    Entry("rtdl-ft-transformer-train", "rtdl_revisiting_models", "rtdl-revisiting-models==0.0.2",
          "FT-Transformer (3 continuous, 2 categorical features, 1 block), AdamW: 2 steps; eval forward",
          _rtdl_ft_transformer_train, _RTDL, grad=True, training=True, scope="module"),
    Entry("rtdl-mlp-resnet-linformer", "rtdl_revisiting_models", "rtdl-revisiting-models==0.0.2",
          "MLP and ResNet, one AdamW step each; FT-Transformer backbone with Linformer compression",
          _rtdl_mlp_resnet_linformer, _RTDL, grad=True, training=True, scope="module"),
    Entry("torchkeras-fit", "torchkeras", "torchkeras==4.0.5",
          "KerasModel (Adam, Accuracy): fit 3 epochs with validation, early stopping, checkpoint",
          _torchkeras_fit, _TORCHKERAS, grad=True, training=True, scope="module"),
    Entry("torchkeras-evaluate", "torchkeras", "torchkeras==4.0.5",
          "KerasModel.evaluate on a validation DataLoader (loss and Accuracy per batch), then a forward",
          _torchkeras_evaluate, _TORCHKERAS, scope="module"),
    # round 34
    Entry("tnt-autounit-fit", "torchtnt", "torchtnt==0.2.4",
          "AutoUnit (SGD, StepLR, 2-step accumulation, clipping): fit 2 epochs with an eval loader",
          _tnt_autounit_fit, _TNT, grad=True, training=True, scope="module"),
    Entry("tnt-unit-train-predict", "torchtnt", "torchtnt==0.2.4",
          "A user TrainUnit/EvalUnit: train 2 epochs with TQDMProgressBar and EarlyStopping; evaluate; predict",
          _tnt_unit_train_predict, _TNT, grad=True, training=True, scope="module"),
    Entry("skrl-dqn-update", "skrl", "skrl==2.1.1",
          "DQN (Q and target networks, RandomMemory, epsilon greedy): 8 steps of act, record, post_interaction",
          _skrl_dqn_update, _SKRL, grad=True, training=True, scope="module"),
    Entry("skrl-ppo-update", "skrl", "skrl==2.1.1",
          "PPO (Gaussian policy, value, running scalers, KLAdaptiveLR): one 8-step rollout and its update",
          _skrl_ppo_update, _SKRL, grad=True, training=True, scope="module"),
    Entry("torchfm-deepfm-xdeepfm-train", "torchfm", "torchfm==0.7.0",
          "DeepFM and xDeepFM over 3 fields: its examples' train loop, one epoch each (BCE, Adam)",
          _torchfm_deepfm_xdeepfm_train, _TORCHFM, grad=True, training=True, scope="module"),
    Entry("torchfm-interaction-eval", "torchfm", "torchfm==0.7.0",
          "FFM, AFM, AFN, DCN, outer PNN and NFM scored as its examples' test loop (tolist per batch)",
          _torchfm_interaction_eval, _TORCHFM, scope="module"),
    Entry("dasp-eq-compressor-train", "dasp_pytorch", "dasp-pytorch==0.0.1",
          "An encoder predicting ParametricEQ and Compressor parameters (process_normalized): 2 Adam steps",
          _dasp_eq_compressor_train, _DASP, grad=True, training=True, scope="module"),
    Entry("dasp-effects-chain", "dasp_pytorch", "dasp-pytorch==0.0.1",
          "gain, panner, stereo bus, distortion, noise-shaped reverb, widener; Gain and Distortion processors",
          _dasp_effects_chain, _DASP, scope="module"),
    Entry("ppr-page-rank", "torch_ppr", "torch-ppr==0.0.8",
          "page_rank over a 12-node edge list; personalized_page_rank of 4 seeds in batches of 2",
          _ppr_page_rank, _PPR, scope="module"),
    Entry("ppr-power-iteration", "torch_ppr", "torch-ppr==0.0.8",
          "prepare_num_nodes, adjacency, validate_adjacency, prepare_x0, validate_x, power_iteration (sparse, dense)",
          _ppr_power_iteration, _PPR, scope="module"),
    # round 35
    Entry("torchbearer-trial-fit", "torchbearer", "torchbearer==0.5.5",
          "Trial (SGD, acc and loss, StepLR, GradientClipping, L2WeightDecay, EarlyStopping): run 2 epochs",
          _torchbearer_trial_fit, _TORCHBEARER, grad=True, training=True, scope="module"),
    Entry("torchbearer-evaluate-predict", "torchbearer", "torchbearer==0.5.5",
          "Trial on tensors (Adam, MSE): run 1 epoch with validation data; evaluate; predict on test data",
          _torchbearer_evaluate_predict, _TORCHBEARER, grad=True, training=True, scope="module"),
    Entry("nbeats-fit-predict", "nbeats_pytorch", "nbeats-pytorch==1.6.0",
          "NBeatsNet (trend, seasonality): compile, fit 2 epochs on numpy windows with validation; predict",
          _nbeats_fit, _NBEATS, grad=True, training=True, scope="module"),
    Entry("nbeats-generic-train-step", "nbeats_pytorch", "nbeats-pytorch==1.6.0",
          "NBeatsNet (generic with shared weights, seasonality with harmonics): 2 user Adam steps",
          _nbeats_generic_train_step, _NBEATS, grad=True, training=True, scope="module"),
    Entry("torchnlp-awd-lstm-train", "torchnlp", "pytorch-nlp==0.5.0",
          "LockedDropout, WeightDropLSTM, Attention LM: 2 Adam steps; get_token_accuracy, get_accuracy",
          _torchnlp_awd_lstm_train, _TORCHNLP, grad=True, training=True, scope="module"),
    Entry("torchnlp-encode-batch", "torchnlp", "pytorch-nlp==0.5.0",
          "WhitespaceEncoder, LabelEncoder, stack_and_pad_tensors, collate_tensors, lengths_to_mask, CNNEncoder",
          _torchnlp_encode_batch, _TORCHNLP, scope="module"),
    Entry("rtdl-num-bins-encoding", "rtdl_num_embeddings", "rtdl-num-embeddings==0.0.12",
          "compute_bins by quantiles (8 and 4 bins), PiecewiseLinearEncoding of a batch with each",
          _rtdl_num_bins_encoding, _RTDL_NUM, scope="module"),
    Entry("rtdl-num-embeddings-train", "rtdl_num_embeddings", "rtdl-num-embeddings==0.0.12",
          "Periodic (lite off, on), PiecewiseLinear and LinearReLU embeddings into an MLP: 2 AdamW steps",
          _rtdl_num_embeddings_train, _RTDL_NUM, grad=True, training=True, scope="module"),
    Entry("sbi-npe-train-sample", "sbi", "sbi==0.27.0",
          "NPE with an MDN on 64 simulations: append_simulations, train 2 epochs, build_posterior, sample, log_prob",
          _sbi_npe_train_sample, _SBI, grad=True, training=True, scope="module"),
    Entry("sbi-nre-potential", "sbi", "sbi==0.27.0",
          "NRE_A (MLP classifier): train 2 epochs, MCMC posterior's potential; simulate_for_sbi, mcmc_transform",
          _sbi_nre_mcmc, _SBI, grad=True, training=True, scope="module"),
    # round 36
    Entry("torchcast-transformer-train", "torchcast", "torchcast==0.2",
          "EncoderDecoderTransformer (NaN inputs, exogenous, time embeddings): 2 Adam steps of NaN-ignoring L1+MSE",
          _torchcast_transformer_train, _TORCHCAST, grad=True, training=True, scope="module"),
    Entry("torchcast-series-stats", "torchcast", "torchcast==0.2",
          "autocorrelation (with NaNs), partial_autocorrelation, PSD, CSD, moving_average, CRPS, NaN-ignoring losses",
          _torchcast_series_stats, _TORCHCAST, scope="module"),
    Entry("tabm-train-eval", "tabm", "tabm==0.0.3",
          "TabM.make (k=4, piecewise-linear embeddings, one-hot categories): 2 AdamW steps; mean of k softmaxes",
          _tabm_train_eval, _TABM, grad=True, training=True, scope="module"),
    Entry("tabm-layers", "tabm", "tabm==0.0.3",
          "ensemble_*_layers_ on a user MLP, EnsembleView, BatchEnsemble and MiniEnsemble backbones: an SGD step",
          _tabm_layers, _TABM, grad=True, training=True, scope="module"),
    Entry("ranger21-train", "ranger21", "ranger21==0.1.0",
          "Ranger21 (defaults: warmup, warmdown, GC, AGC, PNM, norm loss, lookahead): 8 steps of an MLP",
          _ranger21_train, _RANGER21, grad=True, training=True, scope="module"),
    Entry("ranger21-madgrad-abel", "ranger21", "ranger21==0.1.0",
          "Ranger21 (madgrad, no GC, no lookahead) and Ranger21abel: 6 steps each of an MLP regression",
          _ranger21_madgrad_abel, _RANGER21, grad=True, training=True, scope="module"),
    Entry("torch-ac-ppo-update", "torch_ac", "torch-ac==1.4.0",
          "PPOAlgo (recurrent actor-critic, recurrence 2): collect_experiences of 8 frames, update_parameters",
          _torch_ac_ppo_update, _TORCH_AC, grad=True, training=True, scope="module"),
    Entry("torch-ac-a2c-update", "torch_ac", "torch-ac==1.4.0",
          "A2CAlgo (feed-forward, preprocess_obss, reshape_reward): 2 rounds of collect and update",
          _torch_ac_a2c_update, _TORCH_AC, grad=True, training=True, scope="module"),
    Entry("pysdtw-loss-train", "pysdtw", "pysdtw==0.0.5",
          "SoftDTW on the CPU (numba, gamma 0.1, a Sakoe-Chiba band) as a GRU seq2seq's loss: 2 Adam steps",
          _pysdtw_loss_train, _PYSDTW, grad=True, training=True, scope="module"),
    Entry("pysdtw-packed-distances", "pysdtw", "pysdtw==0.0.5",
          "SoftDTW of PackedSequences (exact and expanded L2, gammas 1 and 0.01); a soft-DTW divergence",
          _pysdtw_packed_distances, _PYSDTW, scope="module"),
    # round 37
    Entry("neurodiffeq-ode-fit", "neurodiffeq", "neurodiffeq==0.7.0",
          "Solver1D (u' + u = 0, IVP, FCNN 8x8, Generator1D): fit 3 epochs, get_solution at 5 points",
          _neurodiffeq_ode_fit, _NEURODIFFEQ, grad=True, training=True, scope="module"),
    Entry("neurodiffeq-laplace-fit", "neurodiffeq", "neurodiffeq==0.7.0",
          "Solver2D (Laplace, DirichletBVP2D, FCNN 8, Generator2D 6x6): fit 2 epochs, best solution on the diagonal",
          _neurodiffeq_laplace_fit, _NEURODIFFEQ, grad=True, training=True, scope="module"),
    Entry("torchkge-transe-train", "torchkge", "torchkge==0.17.7",
          "TransE, MarginLoss, BernoulliNegativeSampler, DataLoader: 2 epochs, normalize; LinkPredictionEvaluator",
          _torchkge_transe_train, _TORCHKGE, grad=True, training=True, scope="module"),
    Entry("torchkge-models-evaluate", "torchkge", "torchkge==0.17.7",
          "DistMult, ComplEx, RESCAL: 1 BCE epoch each; LinkPrediction and TripletClassification evaluators",
          _torchkge_models_evaluate, _TORCHKGE, grad=True, training=True, scope="module"),
    Entry("brevitas-qat-train", "brevitas", "brevitas==0.13.4",
          "QuantIdentity, QuantConv2d, QuantReLU, max pool, QuantLinear: 2 SGD steps, an eval pass",
          _brevitas_qat_train, _BREVITAS, grad=True, training=True, scope="module"),
    Entry("brevitas-calibrate-mha", "brevitas", "brevitas==0.13.4",
          "QuantLinear, QuantMultiheadAttention, QuantLinear: calibration_mode over 2 batches, then inference",
          _brevitas_calibrate_mha, _BREVITAS, scope="module"),
    Entry("hummingbird-convert-predict", "hummingbird", "hummingbird-ml==0.4.12",
          "convert (random forest, gradient boosting, scaler + logistic regression) to torch; predict, predict_proba",
          _hummingbird_convert_predict, _HUMMINGBIRD, scope="module"),
    Entry("hummingbird-tree-strategies", "hummingbird", "hummingbird-ml==0.4.12",
          "random forest as gemm, tree_trav, perf_tree_trav and a GBDT: predict, predict_proba on a tensor",
          _hummingbird_tree_strategies, _HUMMINGBIRD, scope="module"),
    Entry("diffsort-ranking-train", "diffsort", "diffsort==0.2.0",
          "DiffSortNet (bitonic, 8) over a linear scorer's scores: BCE to the true permutation, 2 Adam steps",
          _diffsort_ranking_train, _DIFFSORT, grad=True, training=True, scope="module"),
    Entry("diffsort-distributions", "diffsort", "diffsort==0.2.0",
          "DiffSortNet odd_even 6, bitonic 8 and 5 with cauchy, logistic_phi, gaussian, reciprocal, optimal",
          _diffsort_distributions, _DIFFSORT, scope="module"),
]}
