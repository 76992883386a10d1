"""GenerationConfig: how a judge, a user simulator or a model under evaluation generates.

The API's own message, not google-genai's ``GenerationConfig``: that one lacks ``imageConfig``
and ``modelConfig`` and refuses keys it does not know, so a config the service returns would
lose them. The response schema is google-genai's ``Schema``, as in its Content and Tool.
"""

from __future__ import annotations

from typing import Any

from ._base import Schema, WireModel, reserved_name


class LanguageAuto(WireModel):
    """Deprecated by the service: use ``AudioTranscriptionConfig.languageCodes``."""


class LanguageHints(WireModel):
    """Deprecated by the service: use ``AudioTranscriptionConfig.languageCodes``."""

    language_codes: list[str] | None = None


class AudioTranscriptionConfig(WireModel):
    """Speech recognition of the audio a request or a response carries."""

    adaptation_phrases: list[str] | None = None
    custom_vocabulary: list[str] | None = None
    diarization: bool | None = None
    language_auto: LanguageAuto | None = None
    language_codes: list[str] | None = None
    language_hints: LanguageHints | None = None
    #: ``VERBATIM`` or ``SMART``.
    mode: str | None = None
    source_text: str | None = None
    word_timestamp: bool | None = None


class ImageOutputOptions(WireModel):
    compression_quality: int | None = None
    mime_type: str | None = None


class ImageConfig(WireModel):
    """Image generation: aspect ratio (``"16:9"``), size (``"1K"``), people allowed."""

    aspect_ratio: str | None = None
    image_output_options: ImageOutputOptions | None = None
    image_size: str | None = None
    person_generation: str | None = None
    prominent_people: str | None = None


class ModelConfig(WireModel):
    """``GenerationConfig.ModelConfig``: quality against cost when the service picks a model."""

    feature_selection_preference: str | None = None


class AudioResponseFormat(WireModel):
    bit_rate: int | None = None
    #: ``INLINE`` or ``URI``.
    delivery: str | None = None
    mime_type: str | None = None
    sample_rate: int | None = None


class ImageResponseFormat(WireModel):
    aspect_ratio: str | None = None
    delivery: str | None = None
    image_size: str | None = None
    mime_type: str | None = None


class TextResponseFormat(WireModel):
    mime_type: str | None = None
    #: The JSON Schema of the text (``schema`` on the wire).
    schema_: Any = reserved_name("schema")


class VideoResponseFormat(WireModel):
    aspect_ratio: str | None = None
    delivery: str | None = None
    #: A duration as the API writes it (``"8s"``).
    duration: str | None = None
    gcs_uri: str | None = None
    resolution: str | None = None


class ResponseFormat(WireModel):
    """The format of one output modality."""

    audio: AudioResponseFormat | None = None
    image: ImageResponseFormat | None = None
    text: TextResponseFormat | None = None
    video: VideoResponseFormat | None = None


class AutoRoutingMode(WireModel):
    #: ``PRIORITIZE_QUALITY``, ``BALANCED`` or ``PRIORITIZE_COST``.
    model_routing_preference: str | None = None


class ManualRoutingMode(WireModel):
    model_name: str | None = None


class RoutingConfig(WireModel):
    """``GenerationConfig.RoutingConfig``: the model picked by the service or named here."""

    auto_mode: AutoRoutingMode | None = None
    manual_mode: ManualRoutingMode | None = None


class PrebuiltVoiceConfig(WireModel):
    voice_name: str | None = None


class ReplicatedVoiceConfig(WireModel):
    mime_type: str | None = None
    voice_sample_audio: bytes | None = None


class VoiceConfig(WireModel):
    prebuilt_voice_config: PrebuiltVoiceConfig | None = None
    replicated_voice_config: ReplicatedVoiceConfig | None = None
    voice: str | None = None


class SpeakerVoiceConfig(WireModel):
    speaker: str | None = None
    voice_config: VoiceConfig | None = None


class MultiSpeakerVoiceConfig(WireModel):
    speaker_voice_configs: list[SpeakerVoiceConfig] | None = None


class SpeechConfig(WireModel):
    language_code: str | None = None
    multi_speaker_voice_config: MultiSpeakerVoiceConfig | None = None
    voice_config: VoiceConfig | None = None


class ThinkingConfig(WireModel):
    """``GenerationConfig.ThinkingConfig``: a budget in tokens or a level (``LOW`` ...)."""

    include_thoughts: bool | None = None
    thinking_budget: int | None = None
    thinking_level: str | None = None


class TranslationConfig(WireModel):
    echo_target_language: bool | None = None
    target_language_code: str | None = None


class GenerationConfig(WireModel):
    """Sampling and output settings of a model call."""

    audio_timestamp: bool | None = None
    audio_transcription_config: AudioTranscriptionConfig | None = None
    candidate_count: int | None = None
    enable_affective_dialog: bool | None = None
    frequency_penalty: float | None = None
    image_config: ImageConfig | None = None
    logprobs: int | None = None
    max_output_tokens: int | None = None
    media_resolution: str | None = None
    model_config_: ModelConfig | None = reserved_name("modelConfig")
    presence_penalty: float | None = None
    response_format: list[ResponseFormat] | None = None
    #: A JSON Schema, as a JSON value (the alternative to ``response_schema``).
    response_json_schema: Any = None
    response_logprobs: bool | None = None
    response_mime_type: str | None = None
    response_modalities: list[str] | None = None
    response_schema: Schema | None = None
    routing_config: RoutingConfig | None = None
    seed: int | None = None
    speech_config: SpeechConfig | None = None
    stop_sequences: list[str] | None = None
    temperature: float | None = None
    thinking_config: ThinkingConfig | None = None
    top_k: float | None = None
    top_p: float | None = None
    translation_config: TranslationConfig | None = None
