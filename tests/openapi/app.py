"""The FastAPI application the OpenAPI tests serve: path, query and body parameters, an enum, a
nested model, a file upload, an endpoint failing with 422 and one with 404, and one that tells
which credentials it received (answering them, and keeping them in ``WHOAMI``). The tests serve it with uvicorn on 127.0.0.1 (tests/support/http.ServerThread)
or call it in-process (``Server.from_fastapi``)."""

from __future__ import annotations

import enum
from typing import Annotated

from fastapi import FastAPI, File, Header, HTTPException, Query, UploadFile
from pydantic import BaseModel, Field

app = FastAPI(title="Pet shop", version="1.2.3", description="A small pet shop API")


class Kind(enum.StrEnum):
    cat = "cat"
    dog = "dog"
    fish = "fish"


class Owner(BaseModel):
    name: str
    email: str | None = None


class PetIn(BaseModel):
    name: str = Field(description="the pet's name")
    kind: Kind
    age: int = Field(ge=0)
    owner: Owner | None = None
    tags: list[str] = []


class Pet(PetIn):
    id: int


PETS: dict[int, Pet] = {1: Pet(id=1, name="Rex", kind=Kind.dog, age=3, owner=Owner(name="Ada"), tags=["good"])}


@app.get("/pets", operation_id="list_pets", summary="List pets")
def list_pets(kind: Kind | None = None, limit: int = 10, tag: Annotated[list[str] | None, Query()] = None) -> list[Pet]:
    found = [p for p in PETS.values() if (kind is None or p.kind == kind) and (not tag or set(tag) & set(p.tags))]
    return found[:limit]


@app.get("/pets/{pet_id}", operation_id="get_pet", summary="Get a pet")
def get_pet(pet_id: int) -> Pet:
    if pet_id not in PETS:
        raise HTTPException(404, detail=f"no pet {pet_id}")
    return PETS[pet_id]


@app.post("/pets", operation_id="create_pet", summary="Create a pet", status_code=201)
def create_pet(pet: PetIn) -> Pet:
    new = Pet(id=max(PETS) + 1, **pet.model_dump())
    PETS[new.id] = new
    return new


@app.delete("/pets/{pet_id}", operation_id="delete pet!", status_code=204)
def delete_pet(pet_id: int) -> None:
    PETS.pop(pet_id, None)


@app.post("/files/{folder}", operation_id="upload_file", summary="Upload a file")
async def upload_file(folder: str, file: Annotated[UploadFile, File()]) -> dict[str, object]:
    data = await file.read()
    return {"folder": folder, "size": len(data), "head": data[:16].decode("latin-1")}


@app.get("/echo/path/{value}", operation_id="echo_path")
def echo_path(value: str) -> dict[str, str]:
    return {"value": value}


WHOAMI: list[dict[str, object]] = []  # what /whoami received, as the API saw it (its answer is redacted)


@app.get("/whoami", operation_id="whoami")
def whoami(
    authorization: Annotated[str | None, Header()] = None, x_api_key: Annotated[str | None, Header()] = None
) -> dict[str, object]:
    WHOAMI.append({"authorization": authorization, "x_api_key": x_api_key})
    return WHOAMI[-1]
