<?xml version='1.0' encoding='utf-8'?>
<TS version="2.1" language="fr_FR">
<context>
    <name>GeoDLClassifyActiveLayer</name>
    <message>
        <source>Classify Active Layer…</source>
        <translation>Classer la couche active…</translation>
    </message>
    <message>
        <source>Classify the active raster layer with a GeoDL model</source>
        <translation>Classer la couche raster active avec un modèle GeoDL</translation>
    </message>
    <message>
        <source>Classify Active Layer with Last Model</source>
        <translation>Classer la couche active avec le dernier modèle</translation>
    </message>
    <message>
        <source>GeoDL</source>
        <translation>GeoDL</translation>
    </message>
    <message>
        <source>The active layer is not a raster layer: select the imagery to classify in the Layers panel first.</source>
        <translation>La couche active n'est pas une couche raster : sélectionnez d'abord l'imagerie à classer dans le panneau Couches.</translation>
    </message>
    <message>
        <source>'%1' is not a file GDAL reads (it comes from the %2 provider): save it as a GeoTIFF first.</source>
        <translation>« %1 » n'est pas un fichier lisible par GDAL (elle vient du fournisseur %2) : enregistrez-la d'abord en GeoTIFF.</translation>
    </message>
    <message>
        <source>GeoDL model for '%1'</source>
        <translation>Modèle GeoDL pour « %1 »</translation>
    </message>
    <message>
        <source>GeoDL or TorchScript models (*.pt *.pth);;All files (*)</source>
        <translation>Modèles GeoDL ou TorchScript (*.pt *.pth);;Tous les fichiers (*)</translation>
    </message>
    <message>
        <source>'%1' has %2 bands but the model %3 expects %4: choose a raster with the bands it was trained on, or another model.</source>
        <translation>« %1 » a %2 bandes mais le modèle %3 en attend %4 : choisissez un raster avec les bandes sur lesquelles il a été entraîné, ou un autre modèle.</translation>
    </message>
    <message>
        <source>The geodl:classify algorithm is not registered: re-enable the GeoDL plugin.</source>
        <translation>L'algorithme geodl:classify n'est pas enregistré : réactivez l'extension GeoDL.</translation>
    </message>
    <message>
        <source>%1 classes</source>
        <translation>%1 classes</translation>
    </message>
    <message>
        <source>GeoDL: classifying %1</source>
        <translation>GeoDL : classification de %1</translation>
    </message>
</context>
<context>
    <name>GeoDLClassifyAlgorithm</name>
    <message>
        <source>Classify raster</source>
        <translation>Classer un raster</translation>
    </message>
    <message>
        <source>classify,classification,inference,segmentation,deep learning,unet,prediction</source>
        <translation>classer,classification,inférence,segmentation,apprentissage profond,unet,prédiction</translation>
    </message>
    <message>
        <source>Classification</source>
        <translation>Classification</translation>
    </message>
    <message>
        <source>Raster layer</source>
        <translation>Couche raster</translation>
    </message>
    <message>
        <source>Model file</source>
        <translation>Fichier du modèle</translation>
    </message>
    <message>
        <source>Window size (pixels, 0: the model's sample size)</source>
        <translation>Taille de fenêtre (pixels, 0 : taille des échantillons du modèle)</translation>
    </message>
    <message>
        <source>Overlap (percent of the window)</source>
        <translation>Chevauchement (pourcentage de la fenêtre)</translation>
    </message>
    <message>
        <source>Batch size (windows)</source>
        <translation>Taille de lot (fenêtres)</translation>
    </message>
    <message>
        <source>Test-time augmentation</source>
        <translation>Augmentation au test</translation>
    </message>
    <message>
        <source>Extent</source>
        <translation>Emprise</translation>
    </message>
    <message>
        <source>Mask polygons</source>
        <translation>Polygones de masque</translation>
    </message>
    <message>
        <source>Minimum polygon area (map units squared)</source>
        <translation>Surface minimale des polygones (unités de carte au carré)</translation>
    </message>
    <message>
        <source>Cloud Optimized GeoTIFF</source>
        <translation>GeoTIFF optimisé pour le cloud (COG)</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>Périphérique</translation>
    </message>
    <message>
        <source>CPU threads (0: all cores)</source>
        <translation>Fils d'exécution CPU (0 : tous les cœurs)</translation>
    </message>
    <message>
        <source>Classes</source>
        <translation>Classes</translation>
    </message>
    <message>
        <source>Class probabilities</source>
        <translation>Probabilités des classes</translation>
    </message>
    <message>
        <source>Class polygons</source>
        <translation>Polygones des classes</translation>
    </message>
    <message>
        <source>The classes are written as GeoTIFF: give a .tif file (got %1).</source>
        <translation>Les classes sont écrites en GeoTIFF : donnez un fichier .tif (reçu : %1).</translation>
    </message>
    <message>
        <source>The probabilities are written as GeoTIFF: give a .tif file (got %1).</source>
        <translation>Les probabilités sont écrites en GeoTIFF : donnez un fichier .tif (reçu : %1).</translation>
    </message>
    <message>
        <source>The polygons are written as a GeoPackage: give a .gpkg file (got %1).</source>
        <translation>Les polygones sont écrits en GeoPackage : donnez un fichier .gpkg (reçu : %1).</translation>
    </message>
    <message>
        <source>Cancelled by the user: no output was written.</source>
        <translation>Annulé par l'utilisateur : aucune sortie n'a été écrite.</translation>
    </message>
    <message>
        <source>Classifies every pixel of a raster layer with a model trained by "Train segmentation model". The raster is read window by window, so rasters of any size classify in bounded memory; overlapping windows are blended smoothly (no seams) and the edges are padded by reflection, so no strip is left unclassified. The class raster opens styled with the model's class colours and names.

Model file: the .pt file training wrote (inference.state_dict_path); it says which bands, normalization and classes it needs.
Window size: pixels per window, 0 for the model's sample size (inference.chunk_size).
Overlap: percent of the window shared with each neighbour, e.g. 25 (inference.overlap).
Batch size: windows per forward pass; more is faster until memory runs out (inference.batch_size).
Test-time augmentation: average over the 8 flips and quarter turns (8x slower, often smoother; inference.tta).
Extent: only windows touching it are computed; the rest is nodata.
Mask polygons: only windows with a pixel inside a polygon are computed; pixels outside every polygon are nodata (the layer is reprojected to the raster's CRS; inference.mask).
Probabilities: one band per class, 0-255 (inference.probabilities).
Polygons: the classes as polygons (GeoPackage); smaller than the minimum area are dropped.</source>
        <translation>Classe chaque pixel d'une couche raster avec un modèle entraîné par « Entraîner un modèle de segmentation ». Le raster est lu fenêtre par fenêtre : des rasters de toute taille se classent dans une mémoire bornée ; les fenêtres qui se chevauchent sont fusionnées en douceur (sans raccords) et les bords sont complétés par réflexion, si bien qu'aucune bande ne reste non classée. Le raster des classes s'ouvre avec les couleurs et les noms des classes du modèle.

Fichier du modèle : le fichier .pt écrit par l'entraînement (inference.state_dict_path) ; il indique les bandes, la normalisation et les classes attendues.
Taille de fenêtre : pixels par fenêtre, 0 pour la taille des échantillons du modèle (inference.chunk_size).
Chevauchement : pourcentage de la fenêtre partagé avec chaque voisine, par exemple 25 (inference.overlap).
Taille de lot : fenêtres par passe ; plus c'est grand, plus c'est rapide, jusqu'à épuisement de la mémoire (inference.batch_size).
Augmentation au test : moyenne des 8 symétries et quarts de tour (8 fois plus lent, souvent plus lisse ; inference.tta).
Emprise : seules les fenêtres qui la touchent sont calculées ; le reste vaut nodata.
Polygones de masque : seules les fenêtres ayant un pixel dans un polygone sont calculées ; les pixels hors de tout polygone valent nodata (la couche est reprojetée dans le SCR du raster ; inference.mask).
Probabilités : une bande par classe, de 0 à 255 (inference.probabilities).
Polygones : les classes sous forme de polygones (GeoPackage) ; ceux sous la surface minimale sont écartés.</translation>
    </message>
</context>
<context>
    <name>GeoDLCreateSamplesAlgorithm</name>
    <message>
        <source>Create training samples</source>
        <translation>Créer des échantillons d'entraînement</translation>
    </message>
    <message>
        <source>samples,training,hdf5,ground truth,labels,rasterize,deep learning</source>
        <translation>échantillons,entraînement,hdf5,vérité terrain,étiquettes,rastériser,apprentissage profond</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>Entraînement</translation>
    </message>
    <message>
        <source>Cuts a raster and its ground-truth polygons into training samples: HDF5 stores in geo-deep-learning's layout (trn_samples.hdf5, val_samples.hdf5) and a footprint layer with one polygon per sample.

Raster layer: any GDAL raster, any number of bands (Byte, UInt16, Int16, Float32...); nodata pixels are left out of the loss.
Ground truth: polygons in any CRS (reprojected onto the raster's grid); with "Selected features only", only those.
Class field: integer class ids (0 is the background), or strings, numbered 1, 2... in sorted order. Where polygons overlap, the higher class id wins.
Split: all training; a validation percentage taken as random spatial blocks (so overlapping samples never fall on both sides); or the samples inside a validation polygon layer.
Sample size: samples' height and width in pixels, typically 256 (global.samples_size).
Distance between samples: in pixels, typically 200 (sample.samples_dist).
Minimum annotated percent: samples with fewer non-background pixels are dropped (sample.min_annotated_percent).
Ignored class values: comma-separated values whose pixels are left out of the loss.
Pixels under no polygon are the background (class 0), or, for sparse annotations, left out of the loss too.
Number of classes: background included (global.num_classes); 0 takes it from the data.</source>
        <translation>Découpe un raster et ses polygones de vérité terrain en échantillons d'entraînement : des fichiers HDF5 au format de geo-deep-learning (trn_samples.hdf5, val_samples.hdf5) et une couche d'emprises avec un polygone par échantillon.

Couche raster : tout raster GDAL, avec un nombre quelconque de bandes (Byte, UInt16, Int16, Float32…) ; les pixels nodata sont exclus de la perte.
Vérité terrain : des polygones dans n'importe quel SCR (reprojetés sur la grille du raster) ; avec « Entités sélectionnées uniquement », seulement celles-ci.
Champ de classe : identifiants entiers (0 est le fond), ou chaînes numérotées 1, 2… dans l'ordre alphabétique. Là où des polygones se chevauchent, l'identifiant le plus élevé l'emporte.
Répartition : tout en entraînement ; un pourcentage de validation tiré par blocs spatiaux aléatoires (des échantillons qui se chevauchent ne tombent jamais des deux côtés) ; ou les échantillons situés dans une couche de polygones de validation.
Taille des échantillons : hauteur et largeur en pixels, typiquement 256 (global.samples_size).
Distance entre échantillons : en pixels, typiquement 200 (sample.samples_dist).
Pourcentage annoté minimal : les échantillons ayant moins de pixels hors fond sont écartés (sample.min_annotated_percent).
Valeurs de classe ignorées : valeurs séparées par des virgules dont les pixels sont exclus de la perte.
Les pixels sous aucun polygone sont le fond (classe 0) ou, pour des annotations éparses, exclus eux aussi de la perte.
Nombre de classes : fond compris (global.num_classes) ; 0 le déduit des données.</translation>
    </message>
    <message>
        <source>Raster layer</source>
        <translation>Couche raster</translation>
    </message>
    <message>
        <source>Ground truth polygons</source>
        <translation>Polygones de vérité terrain</translation>
    </message>
    <message>
        <source>Class field</source>
        <translation>Champ de classe</translation>
    </message>
    <message>
        <source>Split</source>
        <translation>Répartition</translation>
    </message>
    <message>
        <source>All training</source>
        <translation>Tout en entraînement</translation>
    </message>
    <message>
        <source>Validation percentage (spatial blocks)</source>
        <translation>Pourcentage de validation (blocs spatiaux)</translation>
    </message>
    <message>
        <source>Validation polygon layer</source>
        <translation>Couche de polygones de validation</translation>
    </message>
    <message>
        <source>Validation percentage</source>
        <translation>Pourcentage de validation</translation>
    </message>
    <message>
        <source>Validation polygons</source>
        <translation>Polygones de validation</translation>
    </message>
    <message>
        <source>Sample size (pixels)</source>
        <translation>Taille des échantillons (pixels)</translation>
    </message>
    <message>
        <source>Distance between samples (pixels)</source>
        <translation>Distance entre échantillons (pixels)</translation>
    </message>
    <message>
        <source>Minimum annotated percent</source>
        <translation>Pourcentage annoté minimal</translation>
    </message>
    <message>
        <source>Number of classes, background included (0: from the data)</source>
        <translation>Nombre de classes, fond compris (0 : d'après les données)</translation>
    </message>
    <message>
        <source>Ignored class values (comma-separated)</source>
        <translation>Valeurs de classe ignorées (séparées par des virgules)</translation>
    </message>
    <message>
        <source>Pixels under no polygon are unknown, not background (sparse annotations)</source>
        <translation>Les pixels sous aucun polygone sont inconnus, pas du fond (annotations éparses)</translation>
    </message>
    <message>
        <source>Random seed (validation blocks)</source>
        <translation>Graine aléatoire (blocs de validation)</translation>
    </message>
    <message>
        <source>Sample stores folder</source>
        <translation>Dossier des fichiers d'échantillons</translation>
    </message>
    <message>
        <source>Sample footprints</source>
        <translation>Emprises des échantillons</translation>
    </message>
    <message>
        <source>Training samples (HDF5)</source>
        <translation>Échantillons d'entraînement (HDF5)</translation>
    </message>
    <message>
        <source>Validation samples (HDF5)</source>
        <translation>Échantillons de validation (HDF5)</translation>
    </message>
    <message>
        <source>Number of training samples</source>
        <translation>Nombre d'échantillons d'entraînement</translation>
    </message>
    <message>
        <source>Number of validation samples</source>
        <translation>Nombre d'échantillons de validation</translation>
    </message>
    <message>
        <source>The raster layer must be a file GDAL reads (this one comes from the %1 provider); save it as a GeoTIFF first.</source>
        <translation>La couche raster doit être un fichier lisible par GDAL (celle-ci vient du fournisseur %1) : enregistrez-la d'abord en GeoTIFF.</translation>
    </message>
    <message>
        <source>Choose a validation polygon layer, or another split.</source>
        <translation>Choisissez une couche de polygones de validation, ou une autre répartition.</translation>
    </message>
    <message>
        <source>Sample footprints are written as a GeoPackage: give a .gpkg file (got %1).</source>
        <translation>Les emprises des échantillons sont écrites en GeoPackage : donnez un fichier .gpkg (reçu : %1).</translation>
    </message>
    <message>
        <source>Cancelled by the user: no sample store was written.</source>
        <translation>Annulé par l'utilisateur : aucun fichier d'échantillons n'a été écrit.</translation>
    </message>
    <message>
        <source>%1: %2 samples in %3</source>
        <translation>%1 : %2 échantillons dans %3</translation>
    </message>
    <message>
        <source>Classes: %1</source>
        <translation>Classes : %1</translation>
    </message>
</context>
<context>
    <name>GeoDLEstimateBatchSizeAlgorithm</name>
    <message>
        <source>Estimate maximum batch size</source>
        <translation>Estimer la taille de lot maximale</translation>
    </message>
    <message>
        <source>batch,memory,gpu,checkpointing,training,deep learning</source>
        <translation>lot,mémoire,gpu,checkpointing,entraînement,apprentissage profond</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>Entraînement</translation>
    </message>
    <message>
        <source>Finds the largest batch whose training step (forward, backward and optimizer step) fits a memory budget, by measuring two small batches and confirming the prediction.

Model: unet, unetsmall, checkpointed_unet (unetsmall with checkpointing) or ternausnet (geo-deep-learning's global.model_name).
Sample size: samples' height and width in pixels, typically 256 (global.samples_size).
Bands and classes: global.number_of_bands and global.num_classes.
Gradient checkpointing: recompute activations during backward; about three times the batch for some 25% more time per sample.
Memory budget: MiB the training may use (the GPU's memory, or the RAM you can spare).</source>
        <translation>Trouve le plus grand lot dont le pas d'entraînement (passe avant, rétropropagation et pas de l'optimiseur) tient dans un budget mémoire, en mesurant deux petits lots puis en confirmant la prédiction.

Modèle : unet, unetsmall, checkpointed_unet (unetsmall avec checkpointing) ou ternausnet (global.model_name de geo-deep-learning).
Taille des échantillons : hauteur et largeur en pixels, typiquement 256 (global.samples_size).
Bandes et classes : global.number_of_bands et global.num_classes.
Checkpointing du gradient : recalcule les activations pendant la rétropropagation ; environ trois fois le lot pour quelque 25 % de temps en plus par échantillon.
Budget mémoire : Mio que l'entraînement peut utiliser (la mémoire du GPU, ou la RAM disponible).</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modèle</translation>
    </message>
    <message>
        <source>Sample size (pixels)</source>
        <translation>Taille des échantillons (pixels)</translation>
    </message>
    <message>
        <source>Number of bands</source>
        <translation>Nombre de bandes</translation>
    </message>
    <message>
        <source>Number of classes</source>
        <translation>Nombre de classes</translation>
    </message>
    <message>
        <source>Gradient checkpointing</source>
        <translation>Checkpointing du gradient</translation>
    </message>
    <message>
        <source>Memory budget (MiB)</source>
        <translation>Budget mémoire (Mio)</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>Périphérique</translation>
    </message>
    <message>
        <source>CPU threads (0: all cores)</source>
        <translation>Fils d'exécution CPU (0 : tous les cœurs)</translation>
    </message>
    <message>
        <source>Confirm with a step at the predicted batch</source>
        <translation>Confirmer par un pas au lot prédit</translation>
    </message>
    <message>
        <source>Maximum batch size</source>
        <translation>Taille de lot maximale</translation>
    </message>
    <message>
        <source>Memory per sample (bytes)</source>
        <translation>Mémoire par échantillon (octets)</translation>
    </message>
    <message>
        <source>Cancelled by the user.</source>
        <translation>Annulé par l'utilisateur.</translation>
    </message>
    <message>
        <source>Device: %1, %2 threads</source>
        <translation>Périphérique : %1, %2 fils d'exécution</translation>
    </message>
    <message>
        <source>Memory per sample: %1 MiB; fixed (model, gradients, optimizer): %2 MiB</source>
        <translation>Mémoire par échantillon : %1 Mio ; fixe (modèle, gradients, optimiseur) : %2 Mio</translation>
    </message>
    <message>
        <source>Maximum batch size: %1%2</source>
        <translation>Taille de lot maximale : %1%2</translation>
    </message>
    <message>
        <source> (confirmed)</source>
        <translation> (confirmée)</translation>
    </message>
</context>
<context>
    <name>GeoDLProvider</name>
    <message>
        <source>GeoDL deep learning (%1)</source>
        <translation>GeoDL apprentissage profond (%1)</translation>
    </message>
</context>
<context>
    <name>GeoDLTrainAlgorithm</name>
    <message>
        <source>Train segmentation model</source>
        <translation>Entraîner un modèle de segmentation</translation>
    </message>
    <message>
        <source>train,training,unet,segmentation,deep learning,model,geo-deep-learning</source>
        <translation>entraîner,entraînement,unet,segmentation,apprentissage profond,modèle,geo-deep-learning</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>Entraînement</translation>
    </message>
    <message>
        <source>Trains a semantic-segmentation network on the sample stores that "Create training samples" wrote, with Adam and a step learning-rate schedule, validating after each epoch. The best model is kept (by validation loss or mean IoU), with a checkpoint of the last epoch beside it.

Training / validation samples: the trn_samples.hdf5 and val_samples.hdf5 stores (global.data_path/samples in geo-deep-learning).
Model: unet, unetsmall, checkpointed_unet (unetsmall with gradient checkpointing) or ternausnet (global.model_name).
Epochs: passes over the training samples, e.g. 50-200 (training.num_epochs).
Batch size: samples per step (training.batch_size); 0 finds the largest that fits the memory budget.
Learning rate: Adam's, typically 0.0001 (training.learning_rate); multiplied by gamma every step size epochs (training.step_size, training.gamma).
Class weights: none, or automatic from the class frequencies of the training samples (training.class_weights: auto), to help rare classes.
Augmentation: random rotation up to a limit in degrees, horizontal and vertical flips, with their probabilities; training samples only.
Gradient checkpointing: recomputes activations in backward; about three times the batch for some 25% more time.
Patience: stop when the chosen metric has not improved for that many epochs (0: never).
Seed and deterministic: the same seed gives the same model on the same machine.
Model file: the trained model with everything classification needs (bands, normalization, classes and colours); the folder also receives last_checkpoint.pt, metrics.csv and report.html. Resume continues from the checkpoint in that folder.</source>
        <translation>Entraîne un réseau de segmentation sémantique sur les fichiers d'échantillons écrits par « Créer des échantillons d'entraînement », avec Adam et un taux d'apprentissage décroissant par paliers, en validant après chaque époque. Le meilleur modèle est conservé (selon la perte de validation ou l'IoU moyenne), avec à côté un point de reprise de la dernière époque.

Échantillons d'entraînement / de validation : les fichiers trn_samples.hdf5 et val_samples.hdf5 (global.data_path/samples dans geo-deep-learning).
Modèle : unet, unetsmall, checkpointed_unet (unetsmall avec checkpointing du gradient) ou ternausnet (global.model_name).
Époques : passes sur les échantillons d'entraînement, par exemple 50 à 200 (training.num_epochs).
Taille de lot : échantillons par pas (training.batch_size) ; 0 cherche le plus grand lot qui tient dans le budget mémoire.
Taux d'apprentissage : celui d'Adam, typiquement 0,0001 (training.learning_rate) ; multiplié par gamma toutes les « pas » époques (training.step_size, training.gamma).
Poids des classes : aucun, ou automatiques d'après la fréquence des classes des échantillons d'entraînement (training.class_weights: auto), pour aider les classes rares.
Augmentation : rotation aléatoire jusqu'à une limite en degrés, symétries horizontale et verticale, avec leurs probabilités ; échantillons d'entraînement seulement.
Checkpointing du gradient : recalcule les activations pendant la rétropropagation ; environ trois fois le lot pour quelque 25 % de temps en plus.
Patience : arrêt quand la métrique choisie ne s'est pas améliorée depuis autant d'époques (0 : jamais).
Graine et déterminisme : la même graine donne le même modèle sur la même machine.
Fichier du modèle : le modèle entraîné avec tout ce dont la classification a besoin (bandes, normalisation, classes et couleurs) ; le dossier reçoit aussi last_checkpoint.pt, metrics.csv et report.html. La reprise continue depuis le point de reprise de ce dossier.</translation>
    </message>
    <message>
        <source>Training samples (HDF5)</source>
        <translation>Échantillons d'entraînement (HDF5)</translation>
    </message>
    <message>
        <source>Validation samples (HDF5)</source>
        <translation>Échantillons de validation (HDF5)</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modèle</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>Époques</translation>
    </message>
    <message>
        <source>Batch size (0: largest that fits)</source>
        <translation>Taille de lot (0 : la plus grande qui tient)</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>Taux d'apprentissage</translation>
    </message>
    <message>
        <source>Weight decay</source>
        <translation>Décroissance des poids</translation>
    </message>
    <message>
        <source>Learning rate step (epochs)</source>
        <translation>Palier du taux d'apprentissage (époques)</translation>
    </message>
    <message>
        <source>Learning rate factor per step (gamma)</source>
        <translation>Facteur du taux d'apprentissage par palier (gamma)</translation>
    </message>
    <message>
        <source>Class weights</source>
        <translation>Poids des classes</translation>
    </message>
    <message>
        <source>None</source>
        <translation>Aucun</translation>
    </message>
    <message>
        <source>Automatic (inverse class frequency)</source>
        <translation>Automatiques (inverse de la fréquence des classes)</translation>
    </message>
    <message>
        <source>Gradient checkpointing</source>
        <translation>Checkpointing du gradient</translation>
    </message>
    <message>
        <source>Dropout</source>
        <translation>Dropout</translation>
    </message>
    <message>
        <source>Dropout probability</source>
        <translation>Probabilité de dropout</translation>
    </message>
    <message>
        <source>Pretrained weights</source>
        <translation>Poids pré-entraînés</translation>
    </message>
    <message>
        <source>Random rotation limit (degrees)</source>
        <translation>Limite de rotation aléatoire (degrés)</translation>
    </message>
    <message>
        <source>Rotation probability</source>
        <translation>Probabilité de rotation</translation>
    </message>
    <message>
        <source>Horizontal flip probability</source>
        <translation>Probabilité de symétrie horizontale</translation>
    </message>
    <message>
        <source>Vertical flip probability</source>
        <translation>Probabilité de symétrie verticale</translation>
    </message>
    <message>
        <source>Training samples to use (0: all)</source>
        <translation>Échantillons d'entraînement utilisés (0 : tous)</translation>
    </message>
    <message>
        <source>Validation samples to use (0: all)</source>
        <translation>Échantillons de validation utilisés (0 : tous)</translation>
    </message>
    <message>
        <source>Early stopping patience (epochs, 0: off)</source>
        <translation>Patience de l'arrêt anticipé (époques, 0 : désactivé)</translation>
    </message>
    <message>
        <source>Best model by</source>
        <translation>Meilleur modèle selon</translation>
    </message>
    <message>
        <source>Validation loss</source>
        <translation>Perte de validation</translation>
    </message>
    <message>
        <source>Mean IoU</source>
        <translation>IoU moyenne</translation>
    </message>
    <message>
        <source>Memory budget for batch size 0 (MiB, 0: automatic)</source>
        <translation>Budget mémoire pour une taille de lot 0 (Mio, 0 : automatique)</translation>
    </message>
    <message>
        <source>Random seed (-1: random)</source>
        <translation>Graine aléatoire (-1 : aléatoire)</translation>
    </message>
    <message>
        <source>Deterministic</source>
        <translation>Déterministe</translation>
    </message>
    <message>
        <source>CPU threads (0: all cores)</source>
        <translation>Fils d'exécution CPU (0 : tous les cœurs)</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>Périphérique</translation>
    </message>
    <message>
        <source>bfloat16 autocast (GPU)</source>
        <translation>Autocast bfloat16 (GPU)</translation>
    </message>
    <message>
        <source>Resume from the checkpoint in the model's folder</source>
        <translation>Reprendre depuis le point de reprise du dossier du modèle</translation>
    </message>
    <message>
        <source>Model file</source>
        <translation>Fichier du modèle</translation>
    </message>
    <message>
        <source>GeoDL model (*.pt)</source>
        <translation>Modèle GeoDL (*.pt)</translation>
    </message>
    <message>
        <source>Training report</source>
        <translation>Rapport d'entraînement</translation>
    </message>
    <message>
        <source>Last checkpoint</source>
        <translation>Dernier point de reprise</translation>
    </message>
    <message>
        <source>Metrics per epoch (CSV)</source>
        <translation>Métriques par époque (CSV)</translation>
    </message>
    <message>
        <source>Best epoch</source>
        <translation>Meilleure époque</translation>
    </message>
    <message>
        <source>Best epoch's mean IoU</source>
        <translation>IoU moyenne de la meilleure époque</translation>
    </message>
    <message>
        <source>Batch size used</source>
        <translation>Taille de lot utilisée</translation>
    </message>
    <message>
        <source>Choose where to save the model file.</source>
        <translation>Choisissez où enregistrer le fichier du modèle.</translation>
    </message>
    <message>
        <source>Cancelled by the user: the last complete epoch is kept in the checkpoint beside the model file; run again with "Resume" to continue.</source>
        <translation>Annulé par l'utilisateur : la dernière époque complète est conservée dans le point de reprise à côté du fichier du modèle ; relancez avec « Reprendre » pour continuer.</translation>
    </message>
    <message>
        <source>Model: %1
Report: %2</source>
        <translation>Modèle : %1
Rapport : %2</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <source>GeoDL</source>
        <translation>GeoDL</translation>
    </message>
    <message>
        <source>Classification failed: see the Log Messages panel (Processing).</source>
        <translation>La classification a échoué : voir le panneau Journal des messages (Processing).</translation>
    </message>
    <message>
        <source>Classified: %1</source>
        <translation>Classé : %1</translation>
    </message>
</context>
</TS>