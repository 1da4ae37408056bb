<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="fr_FR">
<context>
    <name>GeoDLAlgorithm</name>
    <message>
        <source>Training</source>
        <translation>Entraînement</translation>
    </message>
    <message>
        <source>Classification</source>
        <translation>Classification</translation>
    </message>
</context>
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
        <translation>La couche active n&apos;est pas une couche raster : sélectionnez d&apos;abord l&apos;imagerie à classer dans le panneau Couches.</translation>
    </message>
    <message>
        <source>&apos;%1&apos; is not a file GDAL reads (it comes from the %2 provider): save it as a GeoTIFF first.</source>
        <translation>« %1 » n&apos;est pas un fichier lisible par GDAL (elle vient du fournisseur %2) : enregistrez-la d&apos;abord en GeoTIFF.</translation>
    </message>
    <message>
        <source>GeoDL model for &apos;%1&apos;</source>
        <translation>Modèle GeoDL pour « %1 »</translation>
    </message>
    <message>
        <source>GeoDL or TorchScript models (*.pt *.pth);;All files (*)</source>
        <translation>Modèles GeoDL ou TorchScript (*.pt *.pth);;Tous les fichiers (*)</translation>
    </message>
    <message>
        <source>&apos;%1&apos; has %2 bands but the model %3 expects %4: choose a raster with the bands it was trained on, or another model.</source>
        <translation>« %1 » a %2 bandes mais le modèle %3 en attend %4 : choisissez un raster avec les bandes sur lesquelles il a été entraîné, ou un autre modèle.</translation>
    </message>
    <message>
        <source>The geodl:classify algorithm is not registered: re-enable the GeoDL plugin.</source>
        <translation>L&apos;algorithme geodl:classify n&apos;est pas enregistré : réactivez l&apos;extension GeoDL.</translation>
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
        <source>Classifies every pixel of a raster layer with a model trained by &quot;Train segmentation model&quot;. The raster is read window by window, so rasters of any size classify in bounded memory; overlapping windows are blended smoothly (no seams) and the edges are padded by reflection, so no strip is left unclassified. The class raster opens styled with the model&apos;s class colours and names.</source>
        <translation>Classe chaque pixel d&apos;une couche raster avec un modèle entraîné par « Entraîner un modèle de segmentation ». Le raster est lu fenêtre par fenêtre : des rasters de toute taille se classent dans une mémoire bornée ; les fenêtres qui se chevauchent sont fusionnées en douceur (sans raccords) et les bords sont complétés par réflexion, si bien qu&apos;aucune bande ne reste non classée. Le raster des classes s&apos;ouvre avec les couleurs et les noms des classes du modèle.</translation>
    </message>
    <message>
        <source>Cancelled by the user: no output was written</source>
        <translation>Annulé par l&apos;utilisateur : aucune sortie n&apos;a été écrite</translation>
    </message>
    <message>
        <source>Not run: the stopped classification into %1 is kept. Tick &quot;%2&quot; to continue it.</source>
        <translation>Non exécuté : la classification arrêtée dans %1 est conservée. Cochez « %2 » pour la poursuivre.</translation>
    </message>
</context>
<context>
    <name>GeoDLCreateSamplesAlgorithm</name>
    <message>
        <source>Create training samples</source>
        <translation>Créer des échantillons d&apos;entraînement</translation>
    </message>
    <message>
        <source>samples,training,hdf5,ground truth,labels,rasterize,deep learning</source>
        <translation>échantillons,entraînement,hdf5,vérité terrain,étiquettes,rastériser,apprentissage profond</translation>
    </message>
    <message>
        <source>Training samples (HDF5)</source>
        <translation>Échantillons d&apos;entraînement (HDF5)</translation>
    </message>
    <message>
        <source>Validation samples (HDF5)</source>
        <translation>Échantillons de validation (HDF5)</translation>
    </message>
    <message>
        <source>Number of training samples</source>
        <translation>Nombre d&apos;échantillons d&apos;entraînement</translation>
    </message>
    <message>
        <source>Number of validation samples</source>
        <translation>Nombre d&apos;échantillons de validation</translation>
    </message>
    <message>
        <source>The raster layer must be a file GDAL reads (this one comes from the %1 provider); save it as a GeoTIFF first.</source>
        <translation>La couche raster doit être un fichier lisible par GDAL (celle-ci vient du fournisseur %1) : enregistrez-la d&apos;abord en GeoTIFF.</translation>
    </message>
    <message>
        <source>Choose a validation polygon layer, or another split.</source>
        <translation>Choisissez une couche de polygones de validation, ou une autre répartition.</translation>
    </message>
    <message>
        <source>Cancelled by the user: no sample store was written.</source>
        <translation>Annulé par l&apos;utilisateur : aucun fichier d&apos;échantillons n&apos;a été écrit.</translation>
    </message>
    <message>
        <source>%1: %2 samples in %3</source>
        <translation>%1 : %2 échantillons dans %3</translation>
    </message>
    <message>
        <source>Classes: %1</source>
        <translation>Classes : %1</translation>
    </message>
    <message>
        <source>Cuts a raster and its ground-truth polygons into training samples: HDF5 stores in geo-deep-learning&apos;s layout (trn_samples.hdf5, val_samples.hdf5) and a footprint layer with one polygon per sample.</source>
        <translation>Découpe un raster et ses polygones de vérité terrain en échantillons d&apos;entraînement : des fichiers HDF5 au format de geo-deep-learning (trn_samples.hdf5, val_samples.hdf5) et une couche d&apos;emprises avec un polygone par échantillon.</translation>
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
        <source>Maximum batch size</source>
        <translation>Taille de lot maximale</translation>
    </message>
    <message>
        <source>Memory per sample (bytes)</source>
        <translation>Mémoire par échantillon (octets)</translation>
    </message>
    <message>
        <source>Cancelled by the user.</source>
        <translation>Annulé par l&apos;utilisateur.</translation>
    </message>
    <message>
        <source>Device: %1, %2 threads</source>
        <translation>Périphérique : %1, %2 fils d&apos;exécution</translation>
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
    <message>
        <source>Finds the largest batch whose training step (forward, backward and optimizer step) fits a memory budget, by measuring two small batches and confirming the prediction.</source>
        <translation>Trouve le plus grand lot dont le pas d&apos;entraînement (passe avant, rétropropagation et pas de l&apos;optimiseur) tient dans un budget mémoire, en mesurant deux petits lots puis en confirmant la prédiction.</translation>
    </message>
</context>
<context>
    <name>GeoDLProvider</name>
    <message>
        <source>GeoDL deep learning (%1, built for QGIS %2)</source>
        <translation>GeoDL apprentissage profond (%1, compilé pour QGIS %2)</translation>
    </message>
</context>
<context>
    <name>GeoDLResumeQuestion</name>
    <message>
        <source>GeoDL</source>
        <translation>GeoDL</translation>
    </message>
    <message>
        <source>The classification of &apos;%1&apos; into %2 was stopped with %3 of its %4 blocks of rows finished. Continue it from there, or start again?</source>
        <translation>La classification de &apos;%1&apos; dans %2 a été arrêtée avec %3 de ses %4 blocs de lignes terminés. La poursuivre à partir de là, ou recommencer ?</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>Poursuivre</translation>
    </message>
    <message>
        <source>Start Again</source>
        <translation>Recommencer</translation>
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
        <source>GeoDL model (*.pt)</source>
        <translation>Modèle GeoDL (*.pt)</translation>
    </message>
    <message>
        <source>Training report</source>
        <translation>Rapport d&apos;entraînement</translation>
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
        <source>Best epoch&apos;s mean IoU</source>
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
        <source>Model: %1
Report: %2</source>
        <translation>Modèle : %1
Rapport : %2</translation>
    </message>
    <message>
        <source>Trains a semantic-segmentation network on the sample stores that &quot;Create training samples&quot; wrote, with the loss, optimizer and learning-rate schedule chosen (cross-entropy, Adam and a step schedule by default), validating after each epoch. The best model is kept (by validation loss or mean IoU), with a checkpoint of the last epoch beside it.</source>
        <translation>Entraîne un réseau de segmentation sémantique sur les fichiers d&apos;échantillons écrits par « Créer des échantillons d&apos;entraînement », avec la perte, l&apos;optimiseur et le programme du taux d&apos;apprentissage choisis (par défaut l&apos;entropie croisée, Adam et des paliers), en validant après chaque époque. Le meilleur modèle est conservé (selon la perte de validation ou l&apos;IoU moyenne), avec à côté un point de reprise de la dernière époque.</translation>
    </message>
    <message>
        <source>Cancelled by the user</source>
        <translation>Annulé par l&apos;utilisateur</translation>
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
<context>
    <name>geodl</name>
    <message>
        <source>Model</source>
        <translation>Modèle</translation>
    </message>
    <message>
        <source>The architecture; checkpointed_unet is unetsmall with gradient checkpointing.</source>
        <translation>L&apos;architecture ; checkpointed_unet est unetsmall avec le recalcul des activations (gradient checkpointing).</translation>
    </message>
    <message>
        <source>Sample size (pixels)</source>
        <translation>Taille des échantillons (pixels)</translation>
    </message>
    <message>
        <source>Height and width of the samples in pixels, typically 256.</source>
        <translation>Hauteur et largeur des échantillons en pixels, typiquement 256.</translation>
    </message>
    <message>
        <source>Number of bands</source>
        <translation>Nombre de bandes</translation>
    </message>
    <message>
        <source>Input bands (global.number_of_bands).</source>
        <translation>Bandes en entrée (global.number_of_bands).</translation>
    </message>
    <message>
        <source>Number of classes</source>
        <translation>Nombre de classes</translation>
    </message>
    <message>
        <source>Classes, background included (global.num_classes).</source>
        <translation>Classes, fond compris (global.num_classes).</translation>
    </message>
    <message>
        <source>Gradient checkpointing</source>
        <translation>Checkpointing du gradient</translation>
    </message>
    <message>
        <source>Recompute activations in backward: about twice the batch for some 10-30% more time.</source>
        <translation>Recalculer les activations pendant la rétropropagation : environ deux fois le lot pour quelque 10 à 30 % de temps en plus.</translation>
    </message>
    <message>
        <source>Memory budget (MiB)</source>
        <translation>Budget mémoire (Mio)</translation>
    </message>
    <message>
        <source>The memory a training step may use: the GPU&apos;s memory, or the RAM you can spare.</source>
        <translation>La mémoire qu&apos;une étape d&apos;entraînement peut utiliser : celle du GPU, ou la RAM dont vous disposez.</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>Périphérique</translation>
    </message>
    <message>
        <source>auto (a GPU when there is one), cpu, cuda or cuda:N.</source>
        <translation>auto (un GPU s&apos;il y en a un), cpu, cuda ou cuda:N.</translation>
    </message>
    <message>
        <source>LibTorch&apos;s CPU threads (0: all cores).</source>
        <translation>Fils d&apos;exécution CPU de LibTorch (0 : tous les cœurs).</translation>
    </message>
    <message>
        <source>Confirm with a step at the predicted batch</source>
        <translation>Confirmer par un pas au lot prédit</translation>
    </message>
    <message>
        <source>Run one step at the predicted batch under the budget, stepping down if it does not fit (--no-confirm: predict from two small batches only).</source>
        <translation>Exécuter une étape au lot prédit dans le budget, en descendant s&apos;il ne tient pas (--no-confirm : prédire à partir de deux petits lots seulement).</translation>
    </message>
    <message>
        <source>A CSV with one raster per line (first column, relative to the CSV).</source>
        <translation>Un CSV avec un raster par ligne (première colonne, relative au CSV).</translation>
    </message>
    <message>
        <source>Raster layer</source>
        <translation>Couche raster</translation>
    </message>
    <message>
        <source>The raster to classify (on the command line: a raster or a folder of them, instead of img_csv_file).</source>
        <translation>Le raster à classer (en ligne de commande : un raster ou un dossier de rasters, au lieu de img_csv_file).</translation>
    </message>
    <message>
        <source>Model file</source>
        <translation>Fichier du modèle</translation>
    </message>
    <message>
        <source>The .pt file training wrote; it says which bands, normalization and classes it needs. A TorchScript module classifies too, with a sidecar.</source>
        <translation>Le fichier .pt écrit par l&apos;entraînement ; il indique les bandes, la normalisation et les classes dont il a besoin. Un module TorchScript classe aussi, avec un fichier de description.</translation>
    </message>
    <message>
        <source>For a TorchScript model: its description, JSON or YAML (default: beside it).</source>
        <translation>Pour un modèle TorchScript : sa description, JSON ou YAML (par défaut : à côté de lui).</translation>
    </message>
    <message>
        <source>Batch size (windows)</source>
        <translation>Taille de lot (fenêtres)</translation>
    </message>
    <message>
        <source>Windows per forward pass; more is faster until memory runs out (0: as many as fit the memory budget).</source>
        <translation>Fenêtres par passe avant ; plus est plus rapide tant que la mémoire suffit (0 : autant que le budget mémoire en permet).</translation>
    </message>
    <message>
        <source>The memory batch size 0 may fill (0: half the free RAM, or 90% of the GPU&apos;s).</source>
        <translation>La mémoire que la taille de lot 0 peut remplir (0 : la moitié de la RAM libre, ou 90 % de celle du GPU).</translation>
    </message>
    <message>
        <source>Test-time augmentation</source>
        <translation>Augmentation au test</translation>
    </message>
    <message>
        <source>Average over the 8 flips and quarter turns: 8 times slower, often smoother.</source>
        <translation>Moyenne sur les 8 retournements et quarts de tour : 8 fois plus lent, souvent plus lisse.</translation>
    </message>
    <message>
        <source>Extent</source>
        <translation>Emprise</translation>
    </message>
    <message>
        <source>minx,miny,maxx,maxy in the raster&apos;s CRS: only windows touching it are computed, the rest is nodata.</source>
        <translation>minx,miny,maxx,maxy dans le SCR du raster : seules les fenêtres qui la touchent sont calculées, le reste est sans données.</translation>
    </message>
    <message>
        <source>Mask polygons</source>
        <translation>Polygones de masque</translation>
    </message>
    <message>
        <source>Only windows with a pixel inside a polygon are computed; pixels outside every polygon are nodata (reprojected to the raster&apos;s CRS).</source>
        <translation>Seules les fenêtres ayant un pixel dans un polygone sont calculées ; les pixels hors de tout polygone sont sans données (reprojeté dans le SCR du raster).</translation>
    </message>
    <message>
        <source>The layer of the mask (default: the first).</source>
        <translation>La couche du masque (par défaut : la première).</translation>
    </message>
    <message>
        <source>Minimum polygon area (map units squared)</source>
        <translation>Surface minimale des polygones (unités de carte au carré)</translation>
    </message>
    <message>
        <source>Class polygons smaller than this are dropped.</source>
        <translation>Les polygones de classe plus petits sont écartés.</translation>
    </message>
    <message>
        <source>Cloud Optimized GeoTIFF</source>
        <translation>GeoTIFF optimisé pour le cloud (COG)</translation>
    </message>
    <message>
        <source>Write Cloud Optimized GeoTIFFs.</source>
        <translation>Écrire des GeoTIFF optimisés pour le cloud (COG).</translation>
    </message>
    <message>
        <source>Where NAME_inference.tif goes for each raster.</source>
        <translation>Où va NOM_inference.tif pour chaque raster.</translation>
    </message>
    <message>
        <source>Classes</source>
        <translation>Classes</translation>
    </message>
    <message>
        <source>The class raster (GeoTIFF; or a .vrt over parts that every rank writes in place), styled with the model&apos;s classes; for one raster.</source>
        <translation>Le raster des classes (GeoTIFF ; ou un .vrt sur des parties que chaque rang écrit sur place), symbolisé avec les classes du modèle ; pour un seul raster.</translation>
    </message>
    <message>
        <source>Also write NAME_inference_probabilities.tif: one band per class, 0-255.</source>
        <translation>Écrire aussi NOM_inference_probabilities.tif : une bande par classe, 0-255.</translation>
    </message>
    <message>
        <source>The probabilities as Float32 0-1 (implies probabilities).</source>
        <translation>Les probabilités en Float32 0-1 (implique probabilities).</translation>
    </message>
    <message>
        <source>Class probabilities</source>
        <translation>Probabilités des classes</translation>
    </message>
    <message>
        <source>One band per class, 0-255 (GeoTIFF).</source>
        <translation>Une bande par classe, 0-255 (GeoTIFF).</translation>
    </message>
    <message>
        <source>Also write NAME_inference_polygons.gpkg: the classes as polygons.</source>
        <translation>Écrire aussi NOM_inference_polygons.gpkg : les classes en polygones.</translation>
    </message>
    <message>
        <source>Class polygons</source>
        <translation>Polygones des classes</translation>
    </message>
    <message>
        <source>The classes as polygons (GeoPackage: class_id, class_name, area).</source>
        <translation>Les classes en polygones (GeoPackage : class_id, class_name, area).</translation>
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
        <source>Any GDAL raster, any number of bands (Byte, UInt16, Int16, Float32...); nodata pixels are left out of the loss.</source>
        <translation>Tout raster GDAL, avec un nombre quelconque de bandes (Byte, UInt16, Int16, Float32...) ; les pixels sans données sont exclus de la perte.</translation>
    </message>
    <message>
        <source>Ground truth polygons</source>
        <translation>Polygones de vérité terrain</translation>
    </message>
    <message>
        <source>Polygons in any CRS, reprojected onto the raster&apos;s grid; with &quot;Selected features only&quot;, only those.</source>
        <translation>Des polygones dans un SCR quelconque, reprojetés sur la grille du raster ; avec « Entités sélectionnées uniquement », celles-ci seulement.</translation>
    </message>
    <message>
        <source>Class field</source>
        <translation>Champ de classe</translation>
    </message>
    <message>
        <source>Integer class ids (0 is the background), or strings, numbered 1, 2... in sorted order. Where polygons overlap, the higher class id wins.</source>
        <translation>Des identifiants de classe entiers (0 est le fond), ou des chaînes, numérotées 1, 2... dans l&apos;ordre alphabétique. Là où des polygones se chevauchent, l&apos;identifiant le plus grand l&apos;emporte.</translation>
    </message>
    <message>
        <source>The prep CSV: image, vector, attribute and dataset (trn, val or tst) per line, paths relative to the CSV.</source>
        <translation>Le CSV de préparation : image, vecteur, attribut et jeu (trn, val ou tst) par ligne, chemins relatifs au CSV.</translation>
    </message>
    <message>
        <source>The data folder: the stores go to DATA_PATH/samples.</source>
        <translation>Le dossier des données : les fichiers d&apos;échantillons vont dans DATA_PATH/samples.</translation>
    </message>
    <message>
        <source>Split</source>
        <translation>Répartition</translation>
    </message>
    <message>
        <source>dataset: each line&apos;s dataset column (in QGIS: all training); percent: random spatial blocks go to validation, so overlapping samples never fall on both sides; polygons: the samples inside the validation polygons. Setting val_percent or validation_vector chooses the split too.</source>
        <translation>dataset : la colonne de jeu de chaque ligne (dans QGIS : tout en entraînement) ; percent : des blocs spatiaux aléatoires vont en validation, de sorte que des échantillons qui se chevauchent ne tombent jamais des deux côtés ; polygons : les échantillons situés dans les polygones de validation. Donner val_percent ou validation_vector choisit aussi la répartition.</translation>
    </message>
    <message>
        <source>Validation percentage</source>
        <translation>Pourcentage de validation</translation>
    </message>
    <message>
        <source>Percent of each raster&apos;s area that goes to validation (split percent); 0 keeps the dataset column.</source>
        <translation>Pourcentage de la surface de chaque raster qui va en validation (répartition percent) ; 0 garde la colonne de jeu.</translation>
    </message>
    <message>
        <source>Validation polygons</source>
        <translation>Polygones de validation</translation>
    </message>
    <message>
        <source>Samples inside these polygons go to validation (split polygons).</source>
        <translation>Les échantillons situés dans ces polygones vont en validation (répartition polygons).</translation>
    </message>
    <message>
        <source>The layer of validation_vector (default: the first).</source>
        <translation>La couche de validation_vector (par défaut : la première).</translation>
    </message>
    <message>
        <source>Distance between samples (pixels)</source>
        <translation>Distance entre échantillons (pixels)</translation>
    </message>
    <message>
        <source>Pixels from one sample to the next, typically 200.</source>
        <translation>Pixels d&apos;un échantillon au suivant, typiquement 200.</translation>
    </message>
    <message>
        <source>Minimum annotated percent</source>
        <translation>Pourcentage annoté minimal</translation>
    </message>
    <message>
        <source>Samples with a smaller share of non-background, non-ignored pixels are dropped.</source>
        <translation>Les échantillons ayant une part plus faible de pixels ni fond ni ignorés sont écartés.</translation>
    </message>
    <message>
        <source>Classes, background included; checked against the data (0: taken from it).</source>
        <translation>Classes, fond compris ; vérifié d&apos;après les données (0 : tiré de celles-ci).</translation>
    </message>
    <message>
        <source>Bands of the rasters, checked against them (0: not checked).</source>
        <translation>Bandes des rasters, vérifiées d&apos;après eux (0 : non vérifié).</translation>
    </message>
    <message>
        <source>Ignored class values (comma-separated)</source>
        <translation>Valeurs de classe ignorées (séparées par des virgules)</translation>
    </message>
    <message>
        <source>Class values whose pixels become the ignore index (255), left out of the loss.</source>
        <translation>Valeurs de classe dont les pixels deviennent l&apos;indice ignoré (255), exclus de la perte.</translation>
    </message>
    <message>
        <source>Pixels under no polygon are unknown, not background (sparse annotations)</source>
        <translation>Les pixels sous aucun polygone sont inconnus, pas du fond (annotations éparses)</translation>
    </message>
    <message>
        <source>Pixels under no polygon are ignored instead of being the background (sparse annotations).</source>
        <translation>Les pixels sous aucun polygone sont ignorés au lieu d&apos;être le fond (annotations éparses).</translation>
    </message>
    <message>
        <source>Drop samples of background only</source>
        <translation>Écarter les échantillons de fond uniquement</translation>
    </message>
    <message>
        <source>Samples without a single annotated pixel are dropped.</source>
        <translation>Les échantillons sans aucun pixel annoté sont écartés.</translation>
    </message>
    <message>
        <source>Set image pixels of the background to 0</source>
        <translation>Mettre à 0 les pixels d&apos;image du fond</translation>
    </message>
    <message>
        <source>Image pixels labelled background are set to 0 in the samples.</source>
        <translation>Les pixels d&apos;image étiquetés fond sont mis à 0 dans les échantillons.</translation>
    </message>
    <message>
        <source>Ignore labels where the image is 0</source>
        <translation>Ignorer les étiquettes là où l&apos;image vaut 0</translation>
    </message>
    <message>
        <source>Label pixels where every band of the image is 0 are ignored.</source>
        <translation>Les pixels d&apos;étiquette où toutes les bandes de l&apos;image valent 0 sont ignorés.</translation>
    </message>
    <message>
        <source>Random seed (validation blocks)</source>
        <translation>Graine aléatoire (blocs de validation)</translation>
    </message>
    <message>
        <source>Seed of the random validation blocks: the same seed gives the same split.</source>
        <translation>Graine des blocs de validation aléatoires : la même graine donne la même répartition.</translation>
    </message>
    <message>
        <source>Sample stores folder</source>
        <translation>Dossier des fichiers d&apos;échantillons</translation>
    </message>
    <message>
        <source>Where trn_samples.hdf5, val_samples.hdf5 and tst_samples.hdf5 are written.</source>
        <translation>Où trn_samples.hdf5, val_samples.hdf5 et tst_samples.hdf5 sont écrits.</translation>
    </message>
    <message>
        <source>Sample footprints</source>
        <translation>Emprises des échantillons</translation>
    </message>
    <message>
        <source>A GeoPackage with one polygon per sample and its split (default: samples_footprint.gpkg beside the stores).</source>
        <translation>Un GeoPackage avec un polygone par échantillon et sa répartition (par défaut : samples_footprint.gpkg à côté des fichiers d&apos;échantillons).</translation>
    </message>
    <message>
        <source>This process&apos;s rank, for data-parallel sampling: it keeps every world_size-th window.</source>
        <translation>Le rang de ce processus, pour l&apos;échantillonnage parallèle : il garde une fenêtre sur world_size.</translation>
    </message>
    <message>
        <source>Number of processes sampling together.</source>
        <translation>Nombre de processus qui échantillonnent ensemble.</translation>
    </message>
    <message>
        <source>The data folder: the stores are read from DATA_PATH/samples, the model goes to DATA_PATH/model unless output_path says otherwise.</source>
        <translation>Le dossier des données : les échantillons sont lus dans DATA_PATH/samples, le modèle va dans DATA_PATH/model sauf si output_path dit autrement.</translation>
    </message>
    <message>
        <source>Training samples (HDF5)</source>
        <translation>Échantillons d&apos;entraînement (HDF5)</translation>
    </message>
    <message>
        <source>The training store that &quot;Create training samples&quot; wrote (trn_samples.hdf5).</source>
        <translation>Le fichier d&apos;entraînement écrit par « Créer des échantillons d&apos;entraînement » (trn_samples.hdf5).</translation>
    </message>
    <message>
        <source>Validation samples (HDF5)</source>
        <translation>Échantillons de validation (HDF5)</translation>
    </message>
    <message>
        <source>The validation store (val_samples.hdf5).</source>
        <translation>Le fichier de validation (val_samples.hdf5).</translation>
    </message>
    <message>
        <source>The folder of model.pt, last_checkpoint.pt, metrics.csv and report.html.</source>
        <translation>Le dossier de model.pt, last_checkpoint.pt, metrics.csv et report.html.</translation>
    </message>
    <message>
        <source>The samples&apos; size, checked against the stores (0: not checked).</source>
        <translation>La taille des échantillons, vérifiée d&apos;après les fichiers (0 : non vérifiée).</translation>
    </message>
    <message>
        <source>Classes, background included, checked against the stores (0: the stores&apos;).</source>
        <translation>Classes, fond compris, vérifiées d&apos;après les fichiers (0 : celles des fichiers).</translation>
    </message>
    <message>
        <source>Bands, checked against the stores (0: the stores&apos;).</source>
        <translation>Bandes, vérifiées d&apos;après les fichiers (0 : celles des fichiers).</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>Époques</translation>
    </message>
    <message>
        <source>Passes over the training samples, e.g. 50-200.</source>
        <translation>Passages sur les échantillons d&apos;entraînement, p. ex. 50-200.</translation>
    </message>
    <message>
        <source>Samples per step; 0 or auto: the largest that fits the memory budget.</source>
        <translation>Échantillons par étape ; 0 ou auto : la plus grande taille qui tient dans le budget mémoire.</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>Taux d&apos;apprentissage</translation>
    </message>
    <message>
        <source>Weight decay</source>
        <translation>Décroissance des poids</translation>
    </message>
    <message>
        <source>Learning rate step (epochs)</source>
        <translation>Palier du taux d&apos;apprentissage (époques)</translation>
    </message>
    <message>
        <source>Learning rate factor per step (gamma)</source>
        <translation>Facteur du taux d&apos;apprentissage par palier (gamma)</translation>
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
        <source>Class weights</source>
        <translation>Poids des classes</translation>
    </message>
    <message>
        <source>false: every class weighs the same; auto: inverse class frequency in the training samples, to help rare classes; or a list with one weight per class.</source>
        <translation>false : chaque classe pèse autant ; auto : inverse de la fréquence des classes dans les échantillons d&apos;entraînement, pour aider les classes rares ; ou une liste d&apos;un poids par classe.</translation>
    </message>
    <message>
        <source>Dropout</source>
        <translation>Dropout</translation>
    </message>
    <message>
        <source>Dropout in the UNets&apos; blocks.</source>
        <translation>Dropout dans les blocs des UNet.</translation>
    </message>
    <message>
        <source>Dropout probability</source>
        <translation>Probabilité de dropout</translation>
    </message>
    <message>
        <source>The probability of dropout, with dropout.</source>
        <translation>La probabilité du dropout, avec dropout.</translation>
    </message>
    <message>
        <source>Pretrained weights</source>
        <translation>Poids pré-entraînés</translation>
    </message>
    <message>
        <source>A GeoDL model file to fine-tune, a torch.save&apos;d state dict, or VGG11 weights for ternausnet (False: none).</source>
        <translation>Un fichier de modèle GeoDL à affiner, un state dict écrit par torch.save, ou les poids VGG11 pour ternausnet (False : aucun).</translation>
    </message>
    <message>
        <source>Random rotation limit (degrees)</source>
        <translation>Limite de rotation aléatoire (degrés)</translation>
    </message>
    <message>
        <source>Training samples are rotated by up to this many degrees.</source>
        <translation>Les échantillons d&apos;entraînement sont tournés d&apos;au plus ce nombre de degrés.</translation>
    </message>
    <message>
        <source>Rotation probability</source>
        <translation>Probabilité de rotation</translation>
    </message>
    <message>
        <source>The probability of a random rotation.</source>
        <translation>La probabilité d&apos;une rotation aléatoire.</translation>
    </message>
    <message>
        <source>Horizontal flip probability</source>
        <translation>Probabilité de symétrie horizontale</translation>
    </message>
    <message>
        <source>The probability of a horizontal flip.</source>
        <translation>La probabilité d&apos;un retournement horizontal.</translation>
    </message>
    <message>
        <source>Vertical flip probability</source>
        <translation>Probabilité de symétrie verticale</translation>
    </message>
    <message>
        <source>The probability of a vertical flip.</source>
        <translation>La probabilité d&apos;un retournement vertical.</translation>
    </message>
    <message>
        <source>Only the first N training samples (0: all).</source>
        <translation>Seulement les N premiers échantillons d&apos;entraînement (0 : tous).</translation>
    </message>
    <message>
        <source>Only the first N validation samples (0: all).</source>
        <translation>Seulement les N premiers échantillons de validation (0 : tous).</translation>
    </message>
    <message>
        <source>Stop when the best metric has not improved for this many epochs (0: never).</source>
        <translation>Arrêter quand la meilleure métrique ne s&apos;est pas améliorée depuis ce nombre d&apos;époques (0 : jamais).</translation>
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
        <source>Best model by</source>
        <translation>Meilleur modèle selon</translation>
    </message>
    <message>
        <source>What picks the best model: the lowest validation loss or the highest mean IoU.</source>
        <translation>Ce qui désigne le meilleur modèle : la plus faible perte de validation ou la plus haute IoU moyenne.</translation>
    </message>
    <message>
        <source>The seed of initialization, order and augmentation (-1: a random one, recorded).</source>
        <translation>La graine de l&apos;initialisation, de l&apos;ordre et de l&apos;augmentation (-1 : une graine aléatoire, enregistrée).</translation>
    </message>
    <message>
        <source>Deterministic</source>
        <translation>Déterministe</translation>
    </message>
    <message>
        <source>Deterministic algorithms: the same seed gives the same losses and weights.</source>
        <translation>Algorithmes déterministes : la même graine donne les mêmes pertes et les mêmes poids.</translation>
    </message>
    <message>
        <source>Background threads preparing batches (0: automatic).</source>
        <translation>Fils d&apos;exécution en arrière-plan qui préparent les lots (0 : automatique).</translation>
    </message>
    <message>
        <source>Resume from the checkpoint in the model&apos;s folder</source>
        <translation>Reprendre depuis le point de reprise du dossier du modèle</translation>
    </message>
    <message>
        <source>Continue from last_checkpoint.pt in the output folder (after a stop or a crash), or extend a finished run with more epochs.</source>
        <translation>Reprendre depuis last_checkpoint.pt dans le dossier de sortie (après un arrêt ou un plantage), ou prolonger un entraînement terminé avec plus d&apos;époques.</translation>
    </message>
    <message>
        <source>The trained model with everything classification needs; last_checkpoint.pt, metrics.csv and report.html go beside it.</source>
        <translation>Le modèle entraîné avec tout ce dont la classification a besoin ; last_checkpoint.pt, metrics.csv et report.html vont à côté.</translation>
    </message>
    <message>
        <source>The layer of the ground truth (default: the first); QGIS sets it.</source>
        <translation>La couche de la vérité terrain (par défaut : la première) ; QGIS la renseigne.</translation>
    </message>
    <message>
        <source>Data-parallel training: BatchNorm computes its batch statistics over all ranks&apos; batches (as one process with the global batch would), not each rank&apos;s own.</source>
        <translation>Entraînement parallèle : la BatchNorm calcule ses statistiques sur les lots de tous les rangs (comme le ferait un seul processus avec le lot global), et non sur le lot de chaque rang.</translation>
    </message>
    <message>
        <source>Several processes (--nproc, torchrun, srun): seconds a rank waits for the others before all stop (a rank that died or hung).</source>
        <translation>Plusieurs processus (--nproc, torchrun, srun) : secondes pendant lesquelles un rang attend les autres avant que tous s’arrêtent (un rang mort ou bloqué).</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>Précision</translation>
    </message>
    <message>
        <source>Pixels per window side (0: as large as the memory budget allows a batch of, up to 512 and no larger than the raster needs, at least the model&apos;s sample size).</source>
        <translation>Pixels par côté de fenêtre (0 : aussi grande que le budget mémoire le permet pour un lot, jusqu’à 512 et pas plus que le raster n’en demande, au moins la taille d’échantillon du modèle).</translation>
    </message>
    <message>
        <source>Percent of the window shared with each neighbour, blended smoothly, e.g. 25 (-1: what blending needs in pixels: a quarter of the model&apos;s sample size, at least 32, at most a quarter of the window).</source>
        <translation>Pourcentage de la fenêtre partagé avec chaque voisine, fondu en douceur, p. ex. 25 (-1 : ce que le fondu demande en pixels : un quart de la taille d’échantillon du modèle, au moins 32, au plus un quart de la fenêtre).</translation>
    </message>
    <message>
        <source>Off</source>
        <translation>Désactivé</translation>
    </message>
    <message>
        <source>On</source>
        <translation>Activé</translation>
    </message>
    <message>
        <source>Automatic (on when the batch needs it)</source>
        <translation>Automatique (activé quand le lot l’exige)</translation>
    </message>
    <message>
        <source>Recompute activations in backward: about twice the batch for some 10-30% more time. auto: on only when the batch would not fit the memory budget without it.</source>
        <translation>Recalculer les activations pendant la rétropropagation : environ deux fois le lot pour quelque 10 à 30 % de temps en plus. auto : activé seulement quand le lot ne tiendrait pas dans le budget mémoire sans lui.</translation>
    </message>
    <message>
        <source>bfloat16 autocast (precision bf16)</source>
        <translation>Autocast bfloat16 (précision bf16)</translation>
    </message>
    <message>
        <source>The same as precision bf16 (kept for older configs and models).</source>
        <translation>Comme la précision bf16 (gardé pour les configurations et modèles plus anciens).</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>auto</translation>
    </message>
    <message>
        <source>fp32</source>
        <translation>fp32</translation>
    </message>
    <message>
        <source>bf16</source>
        <translation>bf16</translation>
    </message>
    <message>
        <source>Adam</source>
        <translation>Adam</translation>
    </message>
    <message>
        <source>AdamW (decoupled weight decay)</source>
        <translation>AdamW (décroissance des poids découplée)</translation>
    </message>
    <message>
        <source>SGD with momentum</source>
        <translation>SGD avec moment</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>Optimiseur</translation>
    </message>
    <message>
        <source>adam; adamw (weight decay decoupled from the gradient); sgd (with momentum, optionally Nesterov&apos;s).</source>
        <translation>adam ; adamw (décroissance des poids découplée du gradient) ; sgd (avec moment, éventuellement celui de Nesterov).</translation>
    </message>
    <message>
        <source>The optimizer&apos;s learning rate (onecycle: its peak), typically 0.0001 for adam, 0.01 for sgd.</source>
        <translation>Le taux d&apos;apprentissage de l&apos;optimiseur (onecycle : son maximum), typiquement 0,0001 pour adam, 0,01 pour sgd.</translation>
    </message>
    <message>
        <source>An L2 penalty on the weights (adam, sgd), or decoupled weight decay (adamw).</source>
        <translation>Une pénalité L2 sur les poids (adam, sgd), ou une décroissance des poids découplée (adamw).</translation>
    </message>
    <message>
        <source>Momentum (sgd)</source>
        <translation>Moment (sgd)</translation>
    </message>
    <message>
        <source>SGD&apos;s momentum.</source>
        <translation>Le moment de SGD.</translation>
    </message>
    <message>
        <source>Nesterov momentum (sgd)</source>
        <translation>Moment de Nesterov (sgd)</translation>
    </message>
    <message>
        <source>SGD with Nesterov&apos;s momentum.</source>
        <translation>SGD avec le moment de Nesterov.</translation>
    </message>
    <message>
        <source>Step (x gamma every step_size epochs)</source>
        <translation>Paliers (x gamma toutes les step_size époques)</translation>
    </message>
    <message>
        <source>Cosine annealing</source>
        <translation>Recuit cosinus</translation>
    </message>
    <message>
        <source>One cycle</source>
        <translation>Un cycle (one cycle)</translation>
    </message>
    <message>
        <source>Reduce on plateau</source>
        <translation>Réduction sur plateau</translation>
    </message>
    <message>
        <source>Learning rate schedule</source>
        <translation>Programme du taux d&apos;apprentissage</translation>
    </message>
    <message>
        <source>step: x gamma every step_size epochs; cosine: down to 0 along half a cosine; onecycle: up from a 25th of the rate to the rate, then down to 1/250000 of it; plateau: x gamma after step_size epochs without a lower validation loss. Set each optimizer step.</source>
        <translation>step : x gamma toutes les step_size époques ; cosine : jusqu&apos;à 0 le long d&apos;une demi-cosinusoïde ; onecycle : d&apos;un 25e du taux jusqu&apos;au taux, puis jusqu&apos;à 1/250000 de celui-ci ; plateau : x gamma après step_size époques sans baisse de la perte de validation. Fixé à chaque pas de l&apos;optimiseur.</translation>
    </message>
    <message>
        <source>step: the learning rate is multiplied by gamma every step_size epochs; plateau: after step_size epochs without progress.</source>
        <translation>step : le taux d&apos;apprentissage est multiplié par gamma toutes les step_size époques ; plateau : après step_size époques sans progrès.</translation>
    </message>
    <message>
        <source>What the learning rate is multiplied by at each step (step, plateau).</source>
        <translation>Ce par quoi le taux d&apos;apprentissage est multiplié à chaque palier (step, plateau).</translation>
    </message>
    <message>
        <source>Warm-up (epochs)</source>
        <translation>Échauffement (époques)</translation>
    </message>
    <message>
        <source>The learning rate rises linearly from 0 over these epochs&apos; steps (onecycle: its rise; 0: 30% of the run).</source>
        <translation>Le taux d&apos;apprentissage monte linéairement depuis 0 pendant les pas de ces époques (onecycle : sa montée ; 0 : 30 % de l&apos;entraînement).</translation>
    </message>
    <message>
        <source>Cross-entropy</source>
        <translation>Entropie croisée</translation>
    </message>
    <message>
        <source>Dice</source>
        <translation>Dice</translation>
    </message>
    <message>
        <source>Focal</source>
        <translation>Focale</translation>
    </message>
    <message>
        <source>Lovász-Softmax</source>
        <translation>Lovász-Softmax</translation>
    </message>
    <message>
        <source>Cross-entropy + Dice</source>
        <translation>Entropie croisée + Dice</translation>
    </message>
    <message>
        <source>Cross-entropy on the hard pixels (OHEM)</source>
        <translation>Entropie croisée sur les pixels difficiles (OHEM)</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>Perte</translation>
    </message>
    <message>
        <source>What training minimises: cross_entropy; dice (1 - soft Dice, per class); focal (cross-entropy weighted by (1 - p)^2, for hard pixels); lovasz (a surrogate of 1 - IoU); ce_dice (their sum); ohem_ce (cross-entropy on the pixels predicted at most 70% right, and at least the 100000 hardest).</source>
        <translation>Ce que l&apos;entraînement minimise : cross_entropy ; dice (1 - Dice souple, par classe) ; focal (entropie croisée pondérée par (1 - p)^2, pour les pixels difficiles) ; lovasz (un substitut de 1 - IoU) ; ce_dice (leur somme) ; ohem_ce (entropie croisée sur les pixels prédits justes à 70 % au plus, et au moins les 100000 plus difficiles).</translation>
    </message>
    <message>
        <source>Epochs with the encoder frozen</source>
        <translation>Époques avec l&apos;encodeur figé</translation>
    </message>
    <message>
        <source>The encoder&apos;s weights stay as they are for the first N epochs (its learning rate is 0) while the decoder learns.</source>
        <translation>Les poids de l&apos;encodeur restent tels quels pendant les N premières époques (son taux d&apos;apprentissage est 0) pendant que le décodeur apprend.</translation>
    </message>
    <message>
        <source>Encoder learning rate factor</source>
        <translation>Facteur du taux d&apos;apprentissage de l&apos;encodeur</translation>
    </message>
    <message>
        <source>The encoder&apos;s learning rate is the schedule&apos;s times this, e.g. 0.1 for a pretrained encoder.</source>
        <translation>Le taux d&apos;apprentissage de l&apos;encodeur est celui du programme multiplié par ce facteur, p. ex. 0,1 pour un encodeur pré-entraîné.</translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation>Automatique</translation>
    </message>
    <message>
        <source>Window size (pixels)</source>
        <translation>Taille de fenêtre (pixels)</translation>
    </message>
    <message>
        <source>Overlap (percent of the window)</source>
        <translation>Recouvrement (pourcentage de la fenêtre)</translation>
    </message>
    <message>
        <source>From the data</source>
        <translation>D&apos;après les données</translation>
    </message>
    <message>
        <source>Number of classes, background included</source>
        <translation>Nombre de classes, fond compris</translation>
    </message>
    <message>
        <source>Largest that fits</source>
        <translation>La plus grande qui tient</translation>
    </message>
    <message>
        <source>Batch size</source>
        <translation>Taille de lot</translation>
    </message>
    <message>
        <source>All</source>
        <translation>Tous</translation>
    </message>
    <message>
        <source>Training samples to use</source>
        <translation>Échantillons d&apos;entraînement utilisés</translation>
    </message>
    <message>
        <source>Validation samples to use</source>
        <translation>Échantillons de validation utilisés</translation>
    </message>
    <message>
        <source>Early stopping patience (epochs)</source>
        <translation>Patience de l&apos;arrêt anticipé (époques)</translation>
    </message>
    <message>
        <source>Random</source>
        <translation>Aléatoire</translation>
    </message>
    <message>
        <source>Random seed</source>
        <translation>Graine aléatoire</translation>
    </message>
    <message>
        <source>CPU threads</source>
        <translation>Fils d&apos;exécution CPU</translation>
    </message>
    <message>
        <source>Memory budget of the automatic batch size (MiB)</source>
        <translation>Budget mémoire de la taille de lot automatique (Mio)</translation>
    </message>
    <message>
        <source>All cores</source>
        <translation>Tous les cœurs</translation>
    </message>
    <message>
        <source>Data-parallel training: the collectives&apos; library. auto is NCCL on GPUs (the CUDA build) and Gloo on CPUs; gloo also joins GPUs, through the CPU.</source>
        <translation>Entraînement parallèle de données : la bibliothèque des opérations collectives. auto choisit NCCL sur les GPU (la version CUDA) et Gloo sur les CPU ; gloo relie aussi les GPU, par le CPU.</translation>
    </message>
    <message>
        <source>bf16 computes in bfloat16 (training: autocast, with float32 weights, optimizer state and loss): several times faster on CPUs with AMX-BF16 or AVX512_BF16 and on GPUs from Ampere on (refused on others), at nearly the same results; fp16 is float16, for older GPUs (training scales the loss); fp32 is exact; auto is bf16 where it runs, fp16 on older GPUs, fp32 on other CPUs.</source>
        <translation>bf16 calcule en bfloat16 (entraînement : autocast, avec poids, état de l’optimiseur et perte en float32) : plusieurs fois plus rapide sur les processeurs dotés d’AMX-BF16 ou d’AVX512_BF16 et sur les GPU à partir d’Ampere (refusé sur les autres), pour des résultats presque identiques ; fp16 est le float16, pour les GPU plus anciens (l’entraînement met la perte à l’échelle) ; fp32 est exact ; auto choisit bf16 là où il fonctionne, fp16 sur les GPU plus anciens, fp32 sur les autres processeurs.</translation>
    </message>
    <message>
        <source>fp16</source>
        <translation>fp16</translation>
    </message>
    <message>
        <source>Replace files that GeoDL did not write where an output&apos;s name is derived (NAME_inference.tif in the working folder, model.pt in the output folder, the stores in DATA_PATH/samples); without it they are refused. A path you name is replaced anyway.</source>
        <translation>Remplacer les fichiers que GeoDL n&apos;a pas écrits là où le nom d&apos;une sortie est dérivé (NAME_inference.tif dans le dossier de travail, model.pt dans le dossier de sortie, les magasins dans DATA_PATH/samples) ; sans cette option ils sont refusés. Un chemin que vous nommez est remplacé dans tous les cas.</translation>
    </message>
    <message>
        <source>Accept imagery unlike the training data</source>
        <translation>Accepter une imagerie différente des données d&apos;entraînement</translation>
    </message>
    <message>
        <source>Band wavelengths (micrometres)</source>
        <translation>Longueurs d&apos;onde des bandes (micromètres)</translation>
    </message>
    <message>
        <source>The central wavelength of each band, in the bands&apos; order, e.g. 0.665,0.56,0.49 for red, green, blue. DOFA needs them (empty: the rasters&apos; band metadata, where it has them); other models record them.</source>
        <translation>La longueur d&apos;onde centrale de chaque bande, dans l&apos;ordre des bandes, p. ex. 0.665,0.56,0.49 pour rouge, vert, bleu. DOFA en a besoin (vide : les métadonnées des bandes des rasters, quand elles en ont) ; les autres modèles les enregistrent.</translation>
    </message>
    <message>
        <source>Pretrained encoder</source>
        <translation>Encodeur pré-entraîné</translation>
    </message>
    <message>
        <source>Weights for the encoder (torch.save or safetensors): torchvision&apos;s ResNet (or a whole DeepLabV3) for resnet* and deeplabv3*, a Mix Transformer for segformer_*, TorchGeo&apos;s DOFA for dofa_*; other than 3 bands adapt a ResNet&apos;s or Mix Transformer&apos;s first convolution.</source>
        <translation>Les poids de l&apos;encodeur (torch.save ou safetensors) : le ResNet de torchvision (ou un DeepLabV3 entier) pour resnet* et deeplabv3*, un Mix Transformer pour segformer_*, le DOFA de TorchGeo pour dofa_* ; avec un autre nombre de bandes que 3, la première convolution d&apos;un ResNet ou d&apos;un Mix Transformer est adaptée.</translation>
    </message>
    <message>
        <source>Classify a raster whose pixel type, CRS units, pixel size (more than 2x off), values (far outside the trained range) or band wavelengths differ from the model&apos;s training data, with a warning, instead of refusing it.</source>
        <translation>Classer un raster dont le type de pixel, les unités du SCR, la taille de pixel (plus de 2 fois différente), les valeurs (loin de la plage d&apos;entraînement) ou les longueurs d&apos;onde des bandes diffèrent des données d&apos;entraînement du modèle, avec un avertissement, au lieu de le refuser.</translation>
    </message>
    <message>
        <source>Resample to the model&apos;s pixel size</source>
        <translation>Rééchantillonner à la taille de pixel du modèle</translation>
    </message>
    <message>
        <source>Classify the raster resampled on the fly to the pixel size the model was trained on (averaged where its pixels are smaller, bilinear where larger), and write the outputs at the raster&apos;s own grid (classes by nearest pixel or majority, probabilities bilinear or averaged).</source>
        <translation>Classer le raster rééchantillonné à la volée à la taille de pixel sur laquelle le modèle a été entraîné (moyenne là où ses pixels sont plus petits, bilinéaire là où ils sont plus grands), et écrire les sorties sur la grille propre du raster (classes par pixel le plus proche ou majoritaire, probabilités bilinéaires ou moyennées).</translation>
    </message>
    <message>
        <source>Stop the job</source>
        <translation>Arrêter la tâche</translation>
    </message>
    <message>
        <source>Skip the raster, name it, and go on</source>
        <translation>Ignorer le raster, le nommer et continuer</translation>
    </message>
    <message>
        <source>For many rasters: stop at the first that cannot be opened, read or classified, or skip it (the summary lists those skipped, and why) and go on.</source>
        <translation>Pour plusieurs rasters : s&apos;arrêter au premier qui ne peut être ouvert, lu ou classé, ou l&apos;ignorer (le résumé liste les rasters ignorés, et pourquoi) et continuer.</translation>
    </message>
    <message>
        <source>Resume a stopped classification</source>
        <translation>Reprendre une classification arrêtée</translation>
    </message>
    <message>
        <source>Continue a classification that was stopped (killed, cancelled, a rank lost) from the blocks it finished, kept beside the output, with the same files and options; without it, a stopped run&apos;s blocks are discarded and it starts again.</source>
        <translation>Poursuivre une classification arrêtée (tuée, annulée, un rang perdu) à partir des blocs qu&apos;elle a terminés, conservés à côté de la sortie, avec les mêmes fichiers et options ; sans cela, les blocs d&apos;une exécution arrêtée sont abandonnés et elle recommence.</translation>
    </message>
    <message>
        <source>Resume a stopped job</source>
        <translation>Reprendre une tâche arrêtée</translation>
    </message>
    <message>
        <source>Continue a sample job that was stopped (killed, cancelled, a rank lost) from the windows it read, kept beside the stores, with the same files and options; without it, a stopped job&apos;s windows are discarded and it starts again.</source>
        <translation>Poursuivre une création d&apos;échantillons arrêtée (tuée, annulée, un rang perdu) à partir des fenêtres qu&apos;elle a lues, conservées à côté des magasins, avec les mêmes fichiers et options ; sans cela, les fenêtres d&apos;une tâche arrêtée sont abandonnées et elle recommence.</translation>
    </message>
</context>
</TS>
