//! Embedding text locally with fastembed and ONNX Runtime.

use std::ops::Range;
use std::path::{Path, PathBuf};

use fastembed::{InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel};
use tokenizers::Tokenizer;

use crate::{ChunkConfig, Error, Result, chunk_spans};

/// The model Amber uses by default: all-MiniLM-L6-v2 with int8 matrix products (dynamic
/// quantization, derived by `scripts/setup.sh` from the packaged int8-weight model). Also
/// the name of its folder under `$AMBER_HOME/models`.
pub const DEFAULT_MODEL_ID: &str = "all-MiniLM-L6-v2-q8";

/// The id recorded with every vector ([`Embedder::model_id`]): the model and how it is
/// run. `+single`: one text per model run. The int8 model quantizes its activations per
/// run (over every text in it, padding included), so a text embedded in a batch got a
/// slightly different vector (cosine 0.985 to 0.996) depending on its batch mates; alone,
/// a text always gets the same vector, the one a query of the same text gets. Vectors
/// cached under the earlier id (batches of 16) are not reused.
pub const VECTOR_ID: &str = "all-MiniLM-L6-v2-q8+single";

/// The command that installs the model and the runtime.
pub const SETUP_HINT: &str = "run `scripts/setup.sh` from the amber repository to install them";

/// ONNX Runtime's file name inside the runtime folder.
const ORT_FILE: &str = "libonnxruntime.so.1.32.0";

/// Texts per model run: one, so a text's vector never depends on the texts embedded with
/// it (see [`VECTOR_ID`]). Measured in the same run on 2 cores: 1.3 to 1.45 times faster
/// than batches of 16 on LongMemEval sessions (long texts), the same on short ones, and
/// the smallest working memory.
const BATCH: usize = 1;

/// Something that turns text into unit vectors and cuts long text to fit its window.
pub trait Embedder: Send {
    /// A stable id of the model; vectors from different ids are never mixed.
    fn model_id(&self) -> &str;
    /// The vector dimension.
    fn dim(&self) -> usize;
    /// The chunking in force, recorded with the index.
    fn chunk_config(&self) -> ChunkConfig;
    /// The byte spans of `text` to embed separately.
    fn chunk(&self, text: &str) -> Vec<Range<usize>>;
    /// One L2-normalised vector per stored text (a passage), in order.
    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
    /// One L2-normalised vector per query text, in order: for models that embed
    /// queries and passages differently (e5's prefixes); by default as [`Embedder::embed`].
    fn embed_queries(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed(texts)
    }
    /// Whether the model lives elsewhere and may be away for a while (an endpoint): its
    /// [`Error::EndpointUnavailable`] is waited out, not taken as a broken model.
    fn may_be_away(&self) -> bool {
        false
    }
}

/// Where the model files and ONNX Runtime live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelPaths {
    /// The ONNX Runtime shared library.
    pub runtime: PathBuf,
    /// The folder with `model.onnx`, `tokenizer.json`, `config.json`,
    /// `special_tokens_map.json` and `tokenizer_config.json`.
    pub model_dir: PathBuf,
}

impl ModelPaths {
    /// The layout that `scripts/setup.sh` installs under `amber_home`. `ORT_DYLIB_PATH`,
    /// when set, names the runtime instead.
    pub fn under(amber_home: &Path) -> ModelPaths {
        let runtime = std::env::var_os("ORT_DYLIB_PATH")
            .map(PathBuf::from)
            .unwrap_or_else(|| amber_home.join("runtime").join(ORT_FILE));
        ModelPaths { runtime, model_dir: amber_home.join("models").join(DEFAULT_MODEL_ID) }
    }
}

/// all-MiniLM-L6-v2 running through fastembed on ONNX Runtime, on this machine.
pub struct FastEmbedder {
    model: TextEmbedding,
    tokenizer: Tokenizer,
    chunking: ChunkConfig,
    dim: usize,
}

fn read(path: PathBuf, what: &'static str) -> Result<Vec<u8>> {
    std::fs::read(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::ModelUnavailable { what, path, hint: SETUP_HINT }
        } else {
            Error::Io { path, source: e }
        }
    })
}

impl FastEmbedder {
    /// Loads ONNX Runtime and the model. A missing file is
    /// [`Error::ModelUnavailable`] naming the setup command, never a panic.
    /// `threads` caps ONNX Runtime's intra-op threads (None: one per core).
    pub fn load(paths: &ModelPaths, chunking: ChunkConfig, threads: Option<usize>) -> Result<FastEmbedder> {
        Self::load_tuned(paths, chunking, threads, true)
    }

    /// [`FastEmbedder::load`], choosing whether ONNX Runtime's idle intra-op threads
    /// spin-wait for work (`spin`, its default: the lowest latency for one caller on its
    /// own). Turn it off when another model instance runs on the same cores at the same
    /// time: spinning threads take the CPU its runs need (docs/PERFORMANCE.md, "The
    /// daemon under load").
    pub fn load_tuned(
        paths: &ModelPaths,
        chunking: ChunkConfig,
        threads: Option<usize>,
        spin: bool,
    ) -> Result<FastEmbedder> {
        if !paths.runtime.is_file() {
            return Err(Error::ModelUnavailable {
                what: "ONNX Runtime",
                path: paths.runtime.clone(),
                hint: SETUP_HINT,
            });
        }
        let dir = &paths.model_dir;
        let onnx = read(dir.join("model.onnx"), "embedding model")?;
        let files = TokenizerFiles {
            tokenizer_file: read(dir.join("tokenizer.json"), "tokenizer")?,
            config_file: read(dir.join("config.json"), "model config")?,
            special_tokens_map_file: read(dir.join("special_tokens_map.json"), "tokenizer special tokens")?,
            tokenizer_config_file: read(dir.join("tokenizer_config.json"), "tokenizer config")?,
        };
        // Loading the runtime explicitly turns a bad library into an error; `ort` would
        // otherwise panic on first use. Later calls in the same process are no-ops.
        ort::init_from(&paths.runtime).map_err(|e| {
            Error::Model(format!("loading ONNX Runtime from {}: {e}", paths.runtime.display()))
        })?;

        let model = UserDefinedEmbeddingModel::new(onnx, files).with_pooling(Pooling::Mean);
        // fastembed sets the truncation to this window and pads each batch to its longest text.
        // Without ONNX Runtime's CPU arena, memory used by a large batch goes back to the
        // allocator instead of staying reserved for the life of the process.
        let cpu = ort::ep::CPU::default().with_arena_allocator(false).build();
        let mut options = InitOptionsUserDefined::new()
            .with_max_length(chunking.max_tokens)
            .with_execution_providers(vec![cpu]);
        if let Some(n) = threads {
            options = options.with_intra_threads(n.max(1));
        }
        if !spin {
            options = options.with_session_config("session.intra_op.allow_spinning", "0");
        }
        let model = TextEmbedding::try_new_from_user_defined(model, options)
            .map_err(|e| Error::Model(e.to_string()))?;
        // The tokenizer for chunking: the model's own (read from the same file), with the
        // truncation to the window and the batch padding fastembed set turned off, so
        // offsets cover the whole text. A copy, not a second parse of tokenizer.json (a
        // tenth of a cold start's model load; the spans are the same, tested).
        let mut tokenizer = model.tokenizer.clone();
        tokenizer.with_truncation(None).map_err(|e| Error::Model(format!("tokenizer.json: {e}")))?;
        tokenizer.with_padding(None);
        let mut me = FastEmbedder { model, tokenizer, chunking, dim: 0 };
        me.dim = me.embed(&["dimension probe"])?[0].len();
        Ok(me)
    }
}

impl Embedder for FastEmbedder {
    fn model_id(&self) -> &str {
        VECTOR_ID
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn chunk_config(&self) -> ChunkConfig {
        self.chunking
    }

    fn chunk(&self, text: &str) -> Vec<Range<usize>> {
        chunk_spans(&self.tokenizer, text, &self.chunking)
    }

    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut out = self.model.embed(texts, Some(BATCH)).map_err(|e| Error::Model(e.to_string()))?;
        for v in &mut out {
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if n > 0.0 {
                v.iter_mut().for_each(|x| *x /= n);
            }
        }
        Ok(out)
    }
}
