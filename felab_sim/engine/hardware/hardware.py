"""Hardware presets for the engines: memory, bandwidth, dense compute and interconnect of one GPU.

Every number is the vendor's, as printed on the spec sheet named in ``source`` (vendors' pages
could not be opened from felab's checks: ``checked_in`` says where the same numbers were read,
and ``note`` says what is not published). Compute is dense (no 2:4 sparsity), in FLOP/s; a
vendor's sparse number is halved and said so. ``None`` means the vendor publishes no such
number for that precision and the part does not run it natively.

Memory is said twice, because vendors print "GB" and mean different things: ``memory_gb`` is the
number as printed, ``memory_unit`` says whether the printed number means 10⁹ or 2³⁰ bytes, and
``memory_bytes`` is what an engine sees as the device's total (CUDA's ``total`` memory, which is
what vLLM multiplies by ``gpu_memory_utilization``). Where a measured total was found it is
used (``memory_bytes_measured``, the comment says whose); otherwise it is the printed number in
the unit it means.

Standard library only: no Django, nothing else of felab_sim.
"""

from __future__ import annotations

from dataclasses import dataclass

GB = 10**9
GIB = 2**30
TERA = 10**12


@dataclass(frozen=True)
class Interconnect:
    """How this GPU talks to its peers in one box, per direction."""

    name: str
    bytes_per_s: float  # one direction, per GPU
    source: str
    # A ring collective's latency: a fixed part once, and one a ring step (NCCL's own model for
    # small messages, its LL protocol: NVIDIA/nccl src/graph/tuning.cc, baseLat and hwLat).
    step_latency_s: float = 1.0e-6  # PCIe
    base_latency_s: float = 6.6e-6


NVLINK_STEP_LATENCY_S = 0.47e-6
NETWORK_STEP_LATENCY_S = 2.7e-6


@dataclass(frozen=True)
class Hardware:
    name: str
    vendor_name: str
    memory_gb: float  # as printed by the vendor
    memory_unit: str  # "GB" (10⁹ bytes) or "GiB" (2³⁰ bytes): what the printed number means
    memory_bytes: int  # the device total an engine sees
    memory_bandwidth: float  # bytes/s
    bf16_flops: float | None  # dense tensor-core peak, FLOP/s
    fp8_flops: float | None
    interconnect: Interconnect
    source: str  # the vendor's spec sheet
    checked_in: str  # where the numbers were read, since the vendor's page could not be opened
    memory_bytes_measured: bool = False  # memory_bytes read off a real card, not the spec
    note: str = ""
    # Tensor cores that multiply 4-bit (FP4/MXFP4) weights as they are: Blackwell's. Without them a
    # 4-bit weight is unpacked and scaled to BF16 on the ordinary cores first (W4A16).
    native_fp4: bool = False

    def peak_flops(self, bytes_per_value: float) -> float:
        """Dense peak at a weight precision: FP8 for 1 byte when the part has it, else BF16."""
        peak = dense_peak(bytes_per_value, self.bf16_flops, self.fp8_flops)
        if peak is None:
            raise ValueError(f"{self.name}: no published dense BF16 number; type one in")
        return peak


def dense_peak(bytes_per_value: float, bf16: float | None, fp8: float | None) -> float | None:
    """The dense peak weights of this size run at: FP8 for weights of 1 byte or fewer when the
    part has FP8 tensor cores, else BF16; None when neither is known. 4-bit weights count at the
    FP8 rate too, an upper bound: W4A16 kernels (vLLM's Marlin, llama.cpp's dequantizing ones)
    multiply at the BF16/FP16 rate."""
    if bytes_per_value <= 1 and fp8 is not None:
        return fp8
    return bf16


PCIE4_X16 = Interconnect(
    "PCIe 4.0 x16",
    32 * GB,
    "PCI-SIG, PCIe 4.0 base specification: 16 GT/s per lane, x16 about 32 GB/s each way",
)
PCIE5_X16 = Interconnect(
    "PCIe 5.0 x16",
    64 * GB,
    "PCI-SIG, PCIe 5.0 base specification: 32 GT/s per lane, x16 about 64 GB/s each way",
)

# Thunderbolt between two Macs (MLX's distributed runs): 40 and 80 Gb/s each way; Thunderbolt 5's
# 120 Gb/s "Bandwidth Boost" is one way only, for displays.
THUNDERBOLT_4 = Interconnect("Thunderbolt 4", 5 * GB, "Intel Thunderbolt 4: 40 Gb/s", NETWORK_STEP_LATENCY_S)
THUNDERBOLT_5 = Interconnect(
    "Thunderbolt 5",
    10 * GB,
    "Intel Thunderbolt 5: 80 Gb/s each way (120 Gb/s one way with Bandwidth Boost)",
    NETWORK_STEP_LATENCY_S,
)


def _mac(
    name: str,
    vendor_name: str,
    memory_gib: int,
    bandwidth_gbs: int,
    link: Interconnect,
    source: str,
    checked_in: str,
) -> Hardware:
    return Hardware(
        name,
        vendor_name,
        memory_gb=memory_gib,
        memory_unit="GiB",
        memory_bytes=memory_gib * GIB,
        memory_bandwidth=bandwidth_gbs * GB,
        bf16_flops=None,
        fp8_flops=None,
        interconnect=link,
        source=source,
        checked_in=checked_in,
        note="Unified memory, shared with the CPU and macOS (lesson 00: weights and KV in about 70% "
        "of it). Apple publishes no GPU TFLOPS figure: type one in to run the engine on it.",
    )


HARDWARE: tuple[Hardware, ...] = (
    Hardware(
        "rtx-4090",
        "NVIDIA GeForce RTX 4090",
        memory_gb=24,
        memory_unit="GiB",
        # CUDA's total on the card of LLMServingSim's RTX 4090 run (its vllm/meta.json,
        # hardware.device_total_memory_bytes): 23.52 GiB of the 24 GiB of GDDR6X.
        memory_bytes=25_250_627_584,
        memory_bandwidth=1008 * GB,
        bf16_flops=165.2 * TERA,
        fp8_flops=330.3 * TERA,
        interconnect=PCIE4_X16,
        source="https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf "
        "(NVIDIA Ada GPU architecture whitepaper, appendix table for the RTX 4090)",
        checked_in="waredb.com/processor/nvidia-geforce-rtx-4090 (1008 GB/s; BF16 tensor 165.15 dense "
        "/ 330.3 sparse; FP8 330.3 dense); the whitepaper's address as many public repositories "
        "cite it; the whitepaper itself was not readable here",
        memory_bytes_measured=True,
        note="BF16 and FP8 with FP32 accumulate, as vLLM runs them; GeForce parts run FP16 with FP16 "
        "accumulate at twice that, which BF16 models do not use. No NVLink.",
    ),
    Hardware(
        "rtx-pro-6000",
        "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
        memory_gb=96,
        memory_unit="GiB",
        # nvidia-smi's total on one such card, 97,887 MiB (MarcoPizeta/flash-next-rtxpro6000-bench,
        # HARDWARE.md). CUDA's total is a little lower (on the RTX 4090 by about 480 MiB); no run
        # recorded it, and the anchor runs on this card are not bound by KV blocks.
        memory_bytes=97_887 * 2**20,
        memory_bandwidth=1792 * GB,
        bf16_flops=503.8 * TERA,
        fp8_flops=1007.6 * TERA,
        interconnect=PCIE5_X16,
        source="https://www.nvidia.com/content/dam/en-zz/Solutions/design-visualization/"
        "quadro-product-literature/workstation-datasheet-blackwell-rtx-pro6000-x-nvidia-us-3519208-"
        "web.pdf (RTX PRO 6000 Blackwell Workstation Edition datasheet)",
        memory_bytes_measured=True,
        checked_in="gpu.name (VideoCardz's copy of the announcement: 96 GB GDDR7, 1,792 GB/s, PCIe "
        "Gen 5) and hmc-tech.com's spec table (BF16 tensor 503.8 TFLOPS dense, 1.01 PFLOPS sparse; "
        "FP8 1.01 PFLOPS dense; FP4 4.03 PFLOPS sparse)",
        note="NVIDIA's datasheet prints only the FP4 sparse peak (4,000 AI TOPS) and 125 TFLOPS FP32; "
        "the dense BF16 and FP8 numbers are that FP4 number halved for sparsity and once per "
        "precision step (4,030 / 2 / 2 = 1,008 FP8; / 2 = 504 BF16), as the table above gives them. "
        "The 96 GB is 32 GDDR7 chips of 3 GiB, so GiB (nvidia-smi shows 97,887 MiB of its "
        "98,304). No NVLink. Its tensor cores take FP4 weights natively (the datasheet's FP4 peak).",
        native_fp4=True,
    ),
    Hardware(
        "h100-sxm",
        "NVIDIA H100 SXM5 80GB",
        memory_gb=80,
        memory_unit="GiB",
        memory_bytes=80 * GIB,
        memory_bandwidth=3350 * GB,
        bf16_flops=989.4 * TERA,
        fp8_flops=1978.9 * TERA,
        interconnect=Interconnect(
            "NVLink 4 (NVSwitch)",
            450 * GB,
            "H100 datasheet: NVLink 900 GB/s, counted both ways",
            NVLINK_STEP_LATENCY_S,
        ),
        source="https://www.nvidia.com/en-us/data-center/h100/ (NVIDIA H100 product page and its datasheet)",
        checked_in="archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html (the datasheet's table: "
        "BF16 1,979 TFLOPS and FP8 3,958 with sparsity, 'specifications 1/2 lower without sparsity'; "
        "3,350 GB/s; NVLink 900 GB/s) and glennklockwood.com/garden/processors/h100 (989.4 dense)",
    ),
    Hardware(
        "h100-pcie",
        "NVIDIA H100 PCIe 80GB",
        memory_gb=80,
        memory_unit="GiB",
        memory_bytes=80 * GIB,
        memory_bandwidth=2000 * GB,
        bf16_flops=756.5 * TERA,
        fp8_flops=1513 * TERA,
        interconnect=Interconnect(
            "NVLink bridge (pairs of cards)",
            300 * GB,
            "H100 datasheet: NVLink 600 GB/s for the PCIe card's bridge, counted both ways",
            NVLINK_STEP_LATENCY_S,
        ),
        source="https://www.nvidia.com/en-us/data-center/h100/ (NVIDIA H100 product page and its datasheet, "
        "H100 PCIe column) and the H100 PCIe product brief PB-11133-001",
        checked_in="archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html (the datasheet's H100 PCIe "
        "column: BF16 1,513 TFLOPS and FP8 3,026 with sparsity, 'specifications 1/2 lower without "
        "sparsity'; 80 GB HBM2e at 2,000 GB/s; NVLink 600 GB/s, PCIe Gen5 128 GB/s) and manuals.plus's "
        "copy of the product brief ('greater than 2,000 gigabytes per second')",
        note="NVIDIA prints the tensor figures with sparsity; halved here (1,513 / 2 = 756.5 BF16, "
        "3,026 / 2 = 1,513 FP8). 114 SMs against the SXM's 132, at 300-350 W.",
    ),
    Hardware(
        "h200",
        "NVIDIA H200 SXM 141GB",
        memory_gb=141,
        memory_unit="GiB",
        # CUDA's total on the H200 of felab's own measurement (measured/h200.jsonl, first line:
        # torch's total_memory, 139.8 GiB; public CUDA out-of-memory messages on H200s print
        # "a total capacity of 139.81 GiB"). This, not nvidia-smi's 143,771 MiB (140.4 GiB), is
        # what vLLM multiplies by gpu_memory_utilization (vllm/v1/worker/gpu_worker.py: its
        # MemorySnapshot's total_memory, CUDA's total as torch reports it).
        memory_bytes=round(139.8 * GIB),
        memory_bytes_measured=True,
        memory_bandwidth=4800 * GB,
        bf16_flops=989.4 * TERA,
        fp8_flops=1978.9 * TERA,
        interconnect=Interconnect(
            "NVLink 4 (NVSwitch)",
            450 * GB,
            "H200 datasheet: NVLink 900 GB/s, counted both ways",
            NVLINK_STEP_LATENCY_S,
        ),
        source="https://www.nvidia.com/en-us/data-center/h200/ (NVIDIA H200 product page and datasheet)",
        checked_in="lzwjava.github.io/nvidia-h200-gpu-specs-en and aiwiki.ai/wiki/nvidia_h200 (141 GB "
        "HBM3e, 4.8 TB/s, FP8 3,958 TFLOPS with sparsity, NVLink 900 GB/s, the GH100 die of the H100)",
        note="The compute is the H100's (same GH100 die); NVIDIA prints it with sparsity only, halved "
        "here. NVIDIA does not say whether '141 GB' means 10⁹ or 2³⁰ bytes; nvidia-smi's 140.4 GiB "
        "(150.8 GB) makes it binary, and an engine sees 139.8 GiB (150.1 GB).",
    ),
    Hardware(
        "b200",
        "NVIDIA B200 (HGX B200, 1,000 W)",
        memory_gb=180,
        memory_unit="GiB",
        # nvidia-smi's total on HGX B200 hosts, as public benchmark notes record it ("NVIDIA B200,
        # 183359 MiB"): 179.1 GiB, 192.3 GB, so NVIDIA's "180 GB" per GPU reads as binary.
        memory_bytes=183_359 * 2**20,
        memory_bytes_measured=True,
        memory_bandwidth=8000 * GB,
        bf16_flops=2250 * TERA,
        fp8_flops=4500 * TERA,
        interconnect=Interconnect(
            "NVLink 5 (NVSwitch)",
            900 * GB,
            "HGX B200 page: NVLink 1.8 TB/s per GPU, counted both ways",
            NVLINK_STEP_LATENCY_S,
        ),
        source="https://www.nvidia.com/en-us/data-center/hgx/ (NVIDIA HGX B200 specifications: 8 GPUs, "
        "1.4 TB of HBM3e, FP8 72 PFLOPS and FP16/BF16 36 PFLOPS with sparsity) and "
        "https://www.nvidia.com/en-us/data-center/dgx-b200/ (DGX B200: 1,440 GB, 64 TB/s HBM3e in all)",
        checked_in="glennklockwood.com/garden/processors/B200 (HGX B200 at 1,000 W: BF16 2,250 dense / "
        "4,500 sparse, FP8 4,500 / 9,000; 8 TB/s; 2 × 900 GB/s NVLink 5) and docs.vultr.com's HGX "
        "B200 overview (179 GB HBM3e as nvidia-smi shows it, 8.0 TB/s, FP8 about 4.5 PFLOPS)",
        note="HGX and DGX B200 give each GPU 180 GB of HBM3e (1,440 GB ÷ 8); nvidia-smi shows 183,359 MiB. "
        "NVIDIA prints the 8-GPU totals with sparsity: 36 PFLOPS BF16 ÷ 8 ÷ 2 = 2,250 dense, 72 FP8 "
        "÷ 8 ÷ 2 = 4,500. The GB200 part runs at 1,200 W and 2,500 / 5,000. Its tensor cores take "
        "FP4 weights natively (the HGX page prints an FP4 Tensor Core figure).",
        native_fp4=True,
    ),
    Hardware(
        "a100-80gb",
        "NVIDIA A100 80GB SXM4",
        memory_gb=80,
        memory_unit="GiB",
        memory_bytes=80 * GIB,
        memory_bandwidth=2039 * GB,
        bf16_flops=312 * TERA,
        fp8_flops=None,
        interconnect=Interconnect(
            "NVLink 3 (NVSwitch)",
            300 * GB,
            "A100 datasheet: NVLink 600 GB/s, counted both ways",
            NVLINK_STEP_LATENCY_S,
        ),
        source="https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
        "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf (NVIDIA A100 datasheet)",
        checked_in="glennklockwood.com/garden/processors/A100 (citing that datasheet: 80 GB HBM2e at "
        "2,039 GB/s, BF16 312 dense / 624 sparse) and jingchaozhang.github.io/A100-white-paper "
        "(NVSwitch 600 GB/s GPU to GPU)",
        note="Ampere has no FP8 tensor cores: FP8 weights run at the BF16 rate.",
    ),
    Hardware(
        "l40s",
        "NVIDIA L40S",
        memory_gb=48,
        memory_unit="GiB",  # 24 GDDR6 chips of 16 Gb on a 384-bit bus: 48 × 2³⁰ bytes
        memory_bytes=48 * GIB,
        memory_bandwidth=864 * GB,
        bf16_flops=362.05 * TERA,
        fp8_flops=733 * TERA,
        interconnect=PCIE4_X16,
        source="https://www.nvidia.com/en-us/data-center/l40s/ (NVIDIA L40S product page and datasheet)",
        checked_in="mullet.se and itcreations.com, copying the datasheet's table: 48 GB GDDR6, 864 GB/s, "
        "BF16 362.05 dense / 733 sparse, FP8 733 dense / 1,466 sparse, PCIe Gen4 x16 64 GB/s "
        "bidirectional, no NVLink",
        note="The datasheet marks the sparse figures with an asterisk; the dense ones are used here.",
    ),
    Hardware(
        "mi300x",
        "AMD Instinct MI300X",
        memory_gb=192,
        memory_unit="GiB",  # 8 HBM3 stacks of 24 GiB (12 dies of 16 Gb each)
        memory_bytes=192 * GIB,
        memory_bandwidth=5300 * GB,
        bf16_flops=1307.4 * TERA,
        fp8_flops=2614.9 * TERA,
        interconnect=Interconnect(
            "AMD Infinity Fabric (7 links to the other 7 GPUs of a platform)",
            448 * GB,
            "MI300X data sheet: 128 GB/s bidirectional per Infinity Fabric link, 7 links",
            NVLINK_STEP_LATENCY_S,  # a direct GPU-to-GPU fabric, as NVLink is
        ),
        source="https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html (AMD Instinct "
        "MI300X product page and data sheet)",
        checked_in="aiwiki.ai/wiki/amd_instinct_mi300x and jaredwatkins.com's MI300 summary (192 GB HBM3, "
        "5.3 TB/s, about 1.3 PFLOPS FP16 and 2.6 PFLOPS FP8 dense); AMD's page prints 1,307.4 TFLOPS "
        "FP16/BF16 and 2,614.9 FP8 without sparsity",
        note="AMD prints the sparse figures separately (2,614.9 BF16, 5,229.8 FP8); dense is used here.",
    ),
    Hardware(
        "dgx-spark",
        "NVIDIA DGX Spark (GB10 Grace Blackwell)",
        memory_gb=128,
        memory_unit="GB",
        memory_bytes=128 * GB,
        memory_bandwidth=273 * GB,
        bf16_flops=None,
        fp8_flops=None,
        interconnect=Interconnect(
            "ConnectX-7 200 GbE (between two Sparks)",
            25 * GB,
            "DGX Spark product page: ConnectX-7 Smart NIC, 200 Gb/s",
            NETWORK_STEP_LATENCY_S,
        ),
        source="https://docs.nvidia.com/dgx/dgx-spark/hardware.html (DGX Spark hardware overview) and "
        "https://www.nvidia.com/en-us/products/workstations/dgx-spark/",
        checked_in="dgx-spark.warehack.ing/hardware and ai-infrastructure.net/dgx-spark (128 GB "
        "LPDDR5x unified, 273 GB/s, 1 PFLOP FP4 with sparsity, dual ConnectX-7 200 GbE)",
        note="NVIDIA publishes only '1 petaFLOP FP4 with sparsity' and about 31 TFLOPS FP32 for the "
        "GB10: no dense BF16 or FP8 number, so none is given here (type one in to run the engine "
        "on it). The 128 GB is shared with the CPU and the OS.",
    ),
    # The course's Macs (lesson 00's 36 GB Mac, lesson 04's M4 Max at 546 GB/s, the
    # M4 Pro's 273 GB/s that the DGX Spark matches). Apple prints memory bandwidth and unified
    # memory, never a TFLOPS figure: compute is None, as for the Spark. Apple's "GB" of memory are
    # binary (macOS's hw.memsize for "16 GB" is 16 × 2³⁰); its GB/s are 10⁹ bytes a second. Each
    # is the chip's base memory; more can be ordered, which the memory field takes typed in.
    _mac(
        "m4",
        "Apple M4 (Mac mini, 16 GB)",
        16,
        120,
        THUNDERBOLT_4,
        "https://www.apple.com/mac-mini/specs/",
        "macrumors.com's announcement of the M4 Mac mini (16 GB standard, Thunderbolt 4 on the M4) "
        "and a launch report (M4 Pro's 273 GB/s 'from 120 GB/s' on the M4)",
    ),
    _mac(
        "m4-pro",
        "Apple M4 Pro (24 GB)",
        24,
        273,
        THUNDERBOLT_5,
        "https://www.apple.com/mac-mini/specs/",
        "9to5mac.com and macrumors.com on the M4 Pro (273 GB/s, Thunderbolt 5) and "
        "apple.gadgetdb.win (the M4 Pro Mac mini's default 24 GB)",
    ),
    _mac(
        "m4-max-32c",
        "Apple M4 Max, 32-core GPU (36 GB)",
        36,
        410,
        THUNDERBOLT_5,
        "https://www.apple.com/mac-studio/specs/",
        "macworld's report of the Mac Studio launch: M4 Max with 14-core CPU and 32-core GPU, 36 GB "
        "of unified memory, 410 GB/s",
    ),
    _mac(
        "m4-max-40c",
        "Apple M4 Max, 40-core GPU (48 GB)",
        48,
        546,
        THUNDERBOLT_5,
        "https://www.apple.com/macbook-pro/specs/",
        "Apple's M4 Max announcement as reported by macmegasite.com and techmoran.com (16-core CPU, "
        "40-core GPU, 546 GB/s, up to 128 GB)",
    ),
    _mac(
        "m3-ultra",
        "Apple M3 Ultra (Mac Studio, 96 GB)",
        96,
        819,
        THUNDERBOLT_5,
        "https://www.apple.com/mac-studio/specs/",
        "macworld's report of the Mac Studio launch (M3 Ultra with 96 GB, 819 GB/s, up to 512 GB) and "
        "Ars Technica's table (819.2 GB/s)",
    ),
)

_BY_NAME = {hardware.name: hardware for hardware in HARDWARE}


def hardware_preset(name: str) -> Hardware:
    """The preset called ``name``; KeyError lists the names there are."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no hardware preset {name!r} (there are {', '.join(_BY_NAME)})") from None
